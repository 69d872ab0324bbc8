package vault

import (
	"context"
	"errors"
	"fmt"
)

// checkSeal checks that Vault at address (named in errors) answers and is
// unsealed.
func (k *kv) checkSeal(ctx context.Context, address string) error {
	st, err := k.client.Sys().SealStatusWithContext(ctx)
	if err != nil {
		return fmt.Errorf("checking vault at %s: %w", address, k.classify(ctx, err))
	}
	if st.Sealed {
		return fmt.Errorf("checking vault at %s: %w", address, ErrSealed)
	}
	return nil
}

// errUndetectable means the token may read neither endpoint that tells a
// mount's KV version.
var errUndetectable = errors.New("cannot detect the kv version")

// resolveVersion returns the KV version to use: the detected one, or
// want (Options.KVVersion) when set. A configured version is checked against the
// mount whenever the token may read it, so that a wrong one is an error
// rather than reads of paths that do not exist (an empty index).
func (k *kv) resolveVersion(ctx context.Context, want int) (int, error) {
	got, err := k.detectVersion(ctx)
	switch {
	case want == 0:
		return got, err
	case errors.Is(err, errUndetectable):
		return want, nil
	case err != nil:
		return 0, err
	case got != want:
		return 0, fmt.Errorf("%w: mount %s is KV version %d, but kv version %d is configured", ErrInvalid, k.mount, got, want)
	}
	return want, nil
}

// detectVersion finds the KV version of the mount, first from
// sys/internal/ui/mounts/{mount} (allowed for any token with access to the
// mount), then from sys/mounts (needs a broader policy).
func (k *kv) detectVersion(ctx context.Context) (int, error) {
	mount := k.mount
	sec, err := k.client.Logical().ReadWithContext(ctx, "sys/internal/ui/mounts/"+mount)
	if err == nil && sec != nil {
		if v, ok := kvVersion(sec.Data, mount); ok {
			return v, nil
		}
	}
	if err = k.classify(ctx, err); errors.Is(err, ErrSealed) || errors.Is(err, ErrUnreachable) {
		return 0, fmt.Errorf("detecting the kv version of %s: %w", mount, err)
	}
	mounts, err2 := k.client.Sys().ListMountsWithContext(ctx)
	if err2 == nil {
		if m, ok := mounts[mount+"/"]; ok && (m.Type == "kv" || m.Type == "generic") {
			if m.Options["version"] == "2" {
				return 2, nil
			}
			return 1, nil
		}
		return 0, fmt.Errorf("%w: no kv mount at %s/ in sys/mounts", ErrInvalid, mount)
	}
	return 0, fmt.Errorf("%w: %w of mount %s (sys/internal/ui/mounts: %v; sys/mounts: %v): "+
		"set the kv version (1 or 2) in the configuration", ErrInvalid, errUndetectable, mount, err, k.classify(ctx, err2))
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
