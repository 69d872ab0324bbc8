package vault

import (
	"context"
	"errors"
	"fmt"
)

// detectVersion finds the KV version of the mount, first from
// sys/internal/ui/mounts/{mount} (allowed for any token with access to the
// mount), then from sys/mounts (needs a broader policy).
func (s *Store) detectVersion(ctx context.Context) (int, error) {
	mount := s.kv.mount
	sec, err := s.kv.client.Logical().ReadWithContext(ctx, "sys/internal/ui/mounts/"+mount)
	if err == nil && sec != nil {
		if v, ok := kvVersion(sec.Data, mount); ok {
			return v, nil
		}
	}
	if err = s.kv.classify(ctx, err); errors.Is(err, ErrSealed) || errors.Is(err, ErrUnreachable) {
		return 0, fmt.Errorf("detecting the kv version of %s: %w", mount, err)
	}
	mounts, err2 := s.kv.client.Sys().ListMountsWithContext(ctx)
	if err2 == nil {
		if m, ok := mounts[mount+"/"]; ok && (m.Type == "kv" || m.Type == "generic") {
			if m.Options["version"] == "2" {
				return 2, nil
			}
			return 1, nil
		}
		return 0, fmt.Errorf("%w: no kv mount at %s/ in sys/mounts", ErrInvalid, mount)
	}
	return 0, fmt.Errorf("%w: cannot detect the kv version of mount %s (sys/internal/ui/mounts: %v; sys/mounts: %v): "+
		"set the kv version (1 or 2) in the configuration", ErrInvalid, mount, err, s.kv.classify(ctx, err2))
}

// kvVersion reads the answer of sys/internal/ui/mounts for mount.
func kvVersion(data map[string]any, mount string) (int, bool) {
	if p, _ := data["path"].(string); p != mount+"/" {
		return 0, false
	}
	if t, _ := data["type"].(string); t != "kv" && t != "generic" {
		return 0, false
	}
	opts, _ := data["options"].(map[string]any)
	if v, _ := opts["version"].(string); v == "2" {
		return 2, true
	}
	return 1, true
}
