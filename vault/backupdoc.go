package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// backupParts is a backup as read and checked; nil marks an absent part.
type backupParts struct {
	metadata *Metadata
	manifest *string
	record   json.RawMessage
	secrets  map[string]json.RawMessage // nil: no secrets part (taken by Backup)
	removal  bool                       // taken by RemoveAll
	raw      map[string]json.RawMessage // the document as stored
}

// BackupContents says what one backup holds.
type BackupContents struct {
	// Record, Metadata and Manifest say whether it holds each of them.
	Record, Metadata, Manifest bool
	// HasSecrets is true when it holds the instance's secrets (taken by
	// BackupAll, RemoveAll, DeleteSecretsBackedUp or Restore).
	HasSecrets bool
	// Secrets lists the paths (relative to the mount) of the secrets it
	// holds, sorted.
	Secrets []string
	// Removal is true for a backup taken by RemoveAll.
	Removal bool
	// TakenAt is when it was taken (RFC 3339), as it says.
	TakenAt string
}

// BackupParts reads backup backupID of id and says what it holds. A backup
// with a part that Restore could not restore is ErrCorrupt, naming the part.
func (a *Archive) BackupParts(ctx context.Context, id, backupID string) (BackupContents, error) {
	if err := validID(id); err != nil {
		return BackupContents{}, err
	}
	if _, ok := parseBackupName(backupID); !ok {
		return BackupContents{}, fmt.Errorf("%w: backup id %q", ErrInvalid, backupID)
	}
	b, err := a.readBackup(ctx, id, backupID)
	if err != nil {
		return BackupContents{}, fmt.Errorf("reading backup %s of %s: %w", backupID, id, err)
	}
	c := BackupContents{Record: b.record != nil, Metadata: b.metadata != nil, Manifest: b.manifest != nil,
		HasSecrets: b.secrets != nil, Secrets: slices.Sorted(maps.Keys(b.secrets)), Removal: b.removal}
	_ = json.Unmarshal(b.raw["taken_at"], &c.TakenAt)
	return c, nil
}

// BackupManifest is the manifest kept in backup backupID of id; false when
// the backup holds none. The backup is checked whole, as Restore would.
func (a *Archive) BackupManifest(ctx context.Context, id, backupID string) (string, bool, error) {
	if err := validID(id); err != nil {
		return "", false, err
	}
	if _, ok := parseBackupName(backupID); !ok {
		return "", false, fmt.Errorf("%w: backup id %q", ErrInvalid, backupID)
	}
	b, err := a.readBackup(ctx, id, backupID)
	if err != nil {
		return "", false, fmt.Errorf("reading backup %s of %s: %w", backupID, id, err)
	}
	if b.manifest == nil {
		return "", false, nil
	}
	return *b.manifest, true, nil
}

// BackupSecret is the secret at path (relative to the mount, e.g.
// "{id}/bindings/{bid}") kept in backup backupID of id; false when the
// backup holds none there. The backup is checked whole, as Restore would.
func (a *Archive) BackupSecret(ctx context.Context, id, backupID, path string) (map[string]any, bool, error) {
	if err := validID(id); err != nil {
		return nil, false, err
	}
	if _, ok := parseBackupName(backupID); !ok {
		return nil, false, fmt.Errorf("%w: backup id %q", ErrInvalid, backupID)
	}
	b, err := a.readBackup(ctx, id, backupID)
	if err != nil {
		return nil, false, fmt.Errorf("reading backup %s of %s: %w", backupID, id, err)
	}
	raw, ok := b.secrets[path]
	if !ok {
		return nil, false, nil
	}
	var data map[string]any
	if err := json.Unmarshal(raw, &data); err != nil || data == nil {
		return nil, false, fmt.Errorf("backup %s of %s: secret %s: %w", backupID, id, path, ErrCorrupt)
	}
	return data, true, nil
}

// BackupRecord is the index record kept in backup backupID of id; nil when
// the backup holds none. The backup is checked whole, as Restore would.
func (a *Archive) BackupRecord(ctx context.Context, id, backupID string) (*Record, error) {
	if err := validID(id); err != nil {
		return nil, err
	}
	if _, ok := parseBackupName(backupID); !ok {
		return nil, fmt.Errorf("%w: backup id %q", ErrInvalid, backupID)
	}
	b, err := a.readBackup(ctx, id, backupID)
	if err != nil {
		return nil, fmt.Errorf("reading backup %s of %s: %w", backupID, id, err)
	}
	if b.record == nil || string(trimSpace(b.record)) == "null" {
		return nil, nil
	}
	rec, problems := decodeRecord(backupID, id, b.record)
	if rec == nil {
		return nil, fmt.Errorf("backup %s of %s: its record: %w", backupID, id, problems[0])
	}
	return rec, nil
}

// readBackup reads backup backupID of id and decodes every part of it.
func (a *Archive) readBackup(ctx context.Context, id, backupID string) (*backupParts, error) {
	p := a.backupPath(id, backupID)
	doc, err := a.kv.read(ctx, p)
	if err != nil {
		return nil, err
	}
	if !doc.Exists {
		return nil, fmt.Errorf("backup %s: %w", a.kv.display(p), ErrNotFound)
	}
	return decodeBackup(a.kv.display(p), id, a.opts.Path, doc.Data)
}

// decodeBackup checks every part of the backup document data of instance id,
// stored at path (named in errors) with backups under {id}/{backupPath}/. A
// part that cannot be restored is ErrCorrupt, naming the backup and the part.
func decodeBackup(path, id, backupPath string, data map[string]json.RawMessage) (*backupParts, error) {
	bad := func(part string, err error) error {
		return fmt.Errorf("backup %s: %w: its %s cannot be restored: %v", path, ErrCorrupt, part, err)
	}
	b := backupParts{raw: data}
	if raw, ok := data["metadata"]; ok {
		b.metadata = &Metadata{}
		if err := b.metadata.UnmarshalJSON(raw); err != nil {
			return nil, bad("metadata", err)
		}
	}
	if raw, ok := data["manifest"]; ok {
		b.manifest = new(string)
		if t := trimSpace(raw); len(t) == 0 || t[0] != '"' || json.Unmarshal(t, b.manifest) != nil {
			return nil, bad("manifest", fmt.Errorf("not a string: %s", snippet(raw)))
		}
	}
	if raw, ok := data["record"]; ok {
		if rec, problems := decodeRecord(path, id, raw); rec == nil {
			return nil, bad("record", problems[0])
		}
		b.record = raw
	}
	if raw, ok := data["secrets"]; ok {
		var err error
		if b.secrets, err = decodeSecrets(id, backupPath, raw); err != nil {
			return nil, bad("secrets", err)
		}
	}
	b.removal = bytes.Equal(trimSpace(data["removal"]), []byte("true"))
	return &b, nil
}

// decodeSecrets decodes a secrets part: an object whose keys are secret
// paths of id and whose values are objects.
func decodeSecrets(id, backupPath string, raw json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if !isObject(raw) || json.Unmarshal(raw, &m) != nil {
		return nil, fmt.Errorf("not an object: %s", snippet(raw))
	}
	for _, p := range slices.Sorted(maps.Keys(m)) {
		if err := instanceSecret(id, backupPath, p); err != nil {
			return nil, err
		}
		if !isObject(m[p]) {
			return nil, fmt.Errorf("secret %q is not an object: %s", p, snippet(m[p]))
		}
	}
	return m, nil
}

// isObject reports whether raw, valid JSON, is an object.
func isObject(raw []byte) bool {
	t := trimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}
