package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Secrets reads and writes secrets under the mount (an instance's
// credentials, its bindings'), each bounded by Options.MaxSecretBytes. A
// Store has them (Store.Secrets).
type Secrets struct {
	kv   *kv
	opts *Options
}

// Secret returns the data at path (relative to the mount, e.g.
// "{id}/credentials" or "{id}/bindings/{bid}") and whether it exists.
// Numbers are json.Number.
func (sc *Secrets) Secret(ctx context.Context, path string) (map[string]any, bool, error) {
	if err := validPath(path); err != nil {
		return nil, false, err
	}
	doc, err := sc.kv.read(ctx, path)
	if err != nil || !doc.Exists {
		return nil, false, err
	}
	raw, err := json.Marshal(doc.Data)
	if err != nil {
		return nil, false, err
	}
	var out map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, false, fmt.Errorf("secret at %s: %w: %v", sc.kv.display(path), ErrCorrupt, err)
	}
	return out, true, nil
}

// PutSecret writes data at path, replacing what was there. The index paths
// are refused (ErrInvalid): the index is written by Update only. Data whose
// JSON encoding is over Options.MaxSecretBytes (default 256 KiB) is refused,
// unwritten (ErrTooLarge).
func (sc *Secrets) PutSecret(ctx context.Context, path string, data map[string]any) error {
	if err := writablePath(path); err != nil {
		return err
	}
	if data == nil {
		data = map[string]any{}
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encoding the secret at %s: %w", sc.kv.display(path), err)
	}
	return sc.putSecret(ctx, path, raw)
}

// CreateSecret writes data at path only when nothing is there: on KV v2 a
// check-and-set (ErrConflict when another writer was first); KV v1 has no
// check-and-set and writes it.
func (sc *Secrets) CreateSecret(ctx context.Context, path string, data map[string]any) error {
	if err := writablePath(path); err != nil {
		return err
	}
	raw, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encoding the secret at %s: %w", sc.kv.display(path), err)
	}
	if err := sc.checkSecret(path, raw); err != nil {
		return err
	}
	cas := noCAS
	if sc.kv.version == 2 {
		cas = 0
	}
	return sc.kv.write(ctx, path, json.RawMessage(raw), cas)
}

// UpdateSecret changes the secret at path from what it holds (ok false
// when absent) to what change returns (nil: left as it is): on KV v2 a
// check-and-set on the version read, read and changed again when another
// writer was first (up to 10 times, then ErrConflict), so that nothing
// another writer added is lost. change may be called several times.
func (sc *Secrets) UpdateSecret(ctx context.Context, path string, change func(cur map[string]any, ok bool) (map[string]any, error)) error {
	if err := writablePath(path); err != nil {
		return err
	}
	return sc.kv.update(ctx, path, func(doc document) (any, error) {
		var cur map[string]any
		if doc.Exists {
			raw, err := json.Marshal(doc.Data)
			if err != nil {
				return nil, err
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&cur); err != nil {
				return nil, fmt.Errorf("secret at %s: %w: %v", sc.kv.display(path), ErrCorrupt, err)
			}
		}
		next, err := change(cur, doc.Exists)
		if err != nil || next == nil {
			return nil, err
		}
		raw, err := json.Marshal(next)
		if err != nil {
			return nil, fmt.Errorf("encoding the secret at %s: %w", sc.kv.display(path), err)
		}
		if err := sc.checkSecret(path, raw); err != nil {
			return nil, err
		}
		return json.RawMessage(raw), nil
	})
}

// putSecret writes the encoded secret raw at path, within the bound.
func (sc *Secrets) putSecret(ctx context.Context, path string, raw json.RawMessage) error {
	if err := sc.checkSecret(path, raw); err != nil {
		return err
	}
	return sc.kv.write(ctx, path, raw, noCAS)
}

func (sc *Secrets) checkSecret(path string, raw json.RawMessage) error {
	if len(raw) > sc.opts.MaxSecretBytes {
		return fmt.Errorf("secret at %s is %d bytes: %w (limit %d)", sc.kv.display(path), len(raw), ErrTooLarge, sc.opts.MaxSecretBytes)
	}
	return nil
}

// DeleteSecret deletes path; on KV v2 with every version, without a backup
// (see DeleteSecretsBackedUp). Deleting an absent secret is not an error.
func (sc *Secrets) DeleteSecret(ctx context.Context, path string) error {
	if err := writablePath(path); err != nil {
		return err
	}
	return sc.kv.remove(ctx, path)
}

func validPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || !printable(p) {
		return fmt.Errorf("%w: secret path %q", ErrInvalid, p)
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: secret path %q", ErrInvalid, p)
		}
	}
	return nil
}

func writablePath(p string) error {
	if err := validPath(p); err != nil {
		return err
	}
	if isIndexPath(p) {
		return fmt.Errorf("%w: %q belongs to the index", ErrInvalid, p)
	}
	return nil
}
