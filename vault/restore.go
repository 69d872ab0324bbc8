package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Restore puts the index record, metadata, manifest and (when the backup
// holds them) secrets of id back as they were in backup backupID, after
// backing up the current state with BackupAll (when backups are on), so that
// the secrets it overwrites are kept. A record, metadata or manifest absent
// from the backup is removed; a secret the backup does not name is left
// alone. The restored metadata gets a "restored" history entry. The backup is
// read and checked whole first: a backup with a part that cannot be restored
// (ErrCorrupt, naming the part) or that is over a size bound (ErrTooLarge)
// changes nothing. The index record is written last.
func (s *Store) Restore(ctx context.Context, id, backupID string) error {
	if err := validID(id); err != nil {
		return err
	}
	if _, ok := parseBackupName(backupID); !ok {
		return fmt.Errorf("%w: backup id %q", ErrInvalid, backupID)
	}
	b, err := s.readBackup(ctx, id, backupID)
	if err == nil {
		err = s.restorable(s.kv.display(s.backupPath(id, backupID)), b)
	}
	if err != nil {
		return fmt.Errorf("restoring %s from %s: %w", id, backupID, err)
	}
	if _, err := s.BackupAll(ctx, id); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("restoring %s: backing up the current state first: %w", id, err)
	}
	if err := s.restoreMetadata(ctx, id, backupID, b.metadata); err != nil {
		return fmt.Errorf("restoring the metadata of %s from %s: %w", id, backupID, err)
	}
	if err := s.restoreManifest(ctx, id, b.manifest); err != nil {
		return fmt.Errorf("restoring the manifest of %s from %s: %w", id, backupID, err)
	}
	for _, p := range slices.Sorted(maps.Keys(b.secrets)) {
		if err := s.putSecret(ctx, p, b.secrets[p]); err != nil {
			return fmt.Errorf("restoring the secrets of %s from %s: %w", id, backupID, err)
		}
	}
	if err := s.restoreRecord(ctx, id, b.record); err != nil {
		return fmt.Errorf("restoring the record of %s from %s: %w", id, backupID, err)
	}
	return nil
}

// restorable checks the parts of a decoded backup against what the store
// may write, so that a restore does not fail half-way.
func (s *Store) restorable(path string, b *backupParts) error {
	tooLarge := func(part string, size, limit int) error {
		return fmt.Errorf("backup %s: its %s is %d bytes: %w (limit %d)", path, part, size, ErrTooLarge, limit)
	}
	if len(b.record) > s.opts.MaxRecordBytes {
		return tooLarge("record", len(b.record), s.opts.MaxRecordBytes)
	}
	if b.manifest != nil && len(*b.manifest) > s.opts.MaxManifestBytes {
		return tooLarge("manifest", len(*b.manifest), s.opts.MaxManifestBytes)
	}
	for p, raw := range b.secrets {
		if len(raw) > s.opts.MaxSecretBytes {
			return tooLarge("secret "+p, len(raw), s.opts.MaxSecretBytes)
		}
		var m map[string]json.RawMessage
		if s.kv.version == 1 && (json.Unmarshal(raw, &m) != nil || len(m) == 0) {
			return fmt.Errorf("backup %s: %w: its secret %s is empty, which KV v1 cannot store", path, ErrCorrupt, p)
		}
	}
	return nil
}

func (s *Store) restoreMetadata(ctx context.Context, id, backupID string, md *Metadata) error {
	if md == nil {
		return s.kv.remove(ctx, metadataPath(id))
	}
	md.AddHistory(HistoryEntry{
		Time:   time.Now().UTC().Format(time.RFC3339),
		Action: "restored",
		Detail: "from backup " + backupID,
	}, s.opts.HistoryCap)
	return s.PutMetadata(ctx, id, md)
}

func (s *Store) restoreManifest(ctx context.Context, id string, text *string) error {
	if text == nil {
		return s.kv.remove(ctx, manifestPath(id))
	}
	return s.PutManifest(ctx, id, *text)
}

func (s *Store) restoreRecord(ctx context.Context, id string, raw json.RawMessage) error {
	e := edit{remove: true}
	if raw != nil {
		e = edit{set: raw}
	}
	_, err := s.apply(ctx, map[string]edit{id: e})
	return err
}
