package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Restore puts the index record, metadata and manifest of id back as they
// were in backup backupID, after backing up the current state (when backups
// are on). A part that was absent in the backup is removed. The restored
// metadata gets a "restored" history entry. The index record is written
// last.
func (s *Store) Restore(ctx context.Context, id, backupID string) error {
	if err := validID(id); err != nil {
		return err
	}
	if _, ok := parseBackupName(backupID); !ok {
		return fmt.Errorf("%w: backup id %q", ErrInvalid, backupID)
	}
	doc, err := s.kv.read(ctx, s.backupPath(id, backupID))
	if err != nil {
		return fmt.Errorf("restoring %s from %s: %w", id, backupID, err)
	}
	if !doc.Exists {
		return fmt.Errorf("restoring %s: backup %s: %w", id, backupID, ErrNotFound)
	}
	if _, err := s.Backup(ctx, id); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("restoring %s: backing up the current state first: %w", id, err)
	}
	steps := []func(context.Context, string, string, json.RawMessage) error{
		s.restoreMetadata, s.restoreManifest, s.restoreRecord,
	}
	keys := []string{"metadata", "manifest", "record"}
	for i, step := range steps {
		if err := step(ctx, id, backupID, doc.Data[keys[i]]); err != nil {
			return fmt.Errorf("restoring the %s of %s from %s: %w", keys[i], id, backupID, err)
		}
	}
	return nil
}

func (s *Store) restoreMetadata(ctx context.Context, id, backupID string, raw json.RawMessage) error {
	if raw == nil {
		return s.kv.remove(ctx, metadataPath(id))
	}
	var md Metadata
	if err := md.UnmarshalJSON(raw); err != nil {
		return err
	}
	md.AddHistory(HistoryEntry{
		Time:   time.Now().UTC().Format(time.RFC3339),
		Action: "restored",
		Detail: "from backup " + backupID,
	}, s.opts.HistoryCap)
	return s.PutMetadata(ctx, id, &md)
}

func (s *Store) restoreManifest(ctx context.Context, id, _ string, raw json.RawMessage) error {
	if raw == nil {
		return s.kv.remove(ctx, manifestPath(id))
	}
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return fmt.Errorf("%w: manifest in backup is not a string", ErrCorrupt)
	}
	return s.PutManifest(ctx, id, text)
}

func (s *Store) restoreRecord(ctx context.Context, id, _ string, raw json.RawMessage) error {
	e := edit{remove: true}
	if raw != nil {
		e = edit{set: raw}
	}
	_, err := s.apply(ctx, map[string]edit{id: e})
	return err
}
