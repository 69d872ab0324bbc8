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
// metadata gets a "restored" history entry. The backup is read and checked
// whole first: a backup with a part that cannot be restored changes nothing
// (ErrCorrupt, naming the part). The index record is written last.
func (s *Store) Restore(ctx context.Context, id, backupID string) error {
	if err := validID(id); err != nil {
		return err
	}
	if _, ok := parseBackupName(backupID); !ok {
		return fmt.Errorf("%w: backup id %q", ErrInvalid, backupID)
	}
	b, err := s.readBackup(ctx, id, backupID)
	if err != nil {
		return fmt.Errorf("restoring %s from %s: %w", id, backupID, err)
	}
	if _, err := s.Backup(ctx, id); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("restoring %s: backing up the current state first: %w", id, err)
	}
	if err := s.restoreMetadata(ctx, id, backupID, b.metadata); err != nil {
		return fmt.Errorf("restoring the metadata of %s from %s: %w", id, backupID, err)
	}
	if err := s.restoreManifest(ctx, id, b.manifest); err != nil {
		return fmt.Errorf("restoring the manifest of %s from %s: %w", id, backupID, err)
	}
	if err := s.restoreRecord(ctx, id, b.record); err != nil {
		return fmt.Errorf("restoring the record of %s from %s: %w", id, backupID, err)
	}
	return nil
}

// backupParts is a backup as read and checked; nil marks an absent part.
type backupParts struct {
	metadata *Metadata
	manifest *string
	record   json.RawMessage
}

// readBackup reads backup backupID of id and decodes every part of it.
func (s *Store) readBackup(ctx context.Context, id, backupID string) (*backupParts, error) {
	p := s.backupPath(id, backupID)
	doc, err := s.kv.read(ctx, p)
	if err != nil {
		return nil, err
	}
	if !doc.Exists {
		return nil, fmt.Errorf("backup %s: %w", s.kv.display(p), ErrNotFound)
	}
	bad := func(part string, err error) error {
		return fmt.Errorf("backup %s: %w: its %s cannot be restored: %v", s.kv.display(p), ErrCorrupt, part, err)
	}
	var b backupParts
	if raw, ok := doc.Data["metadata"]; ok {
		b.metadata = &Metadata{}
		if err := b.metadata.UnmarshalJSON(raw); err != nil {
			return nil, bad("metadata", err)
		}
	}
	if raw, ok := doc.Data["manifest"]; ok {
		b.manifest = new(string)
		if err := json.Unmarshal(raw, b.manifest); err != nil {
			return nil, bad("manifest", fmt.Errorf("not a string: %s", snippet(raw)))
		}
	}
	if raw, ok := doc.Data["record"]; ok {
		if rec, problems := decodeRecord(s.kv.display(p), id, raw); rec == nil {
			return nil, bad("record", problems[0])
		}
		b.record = raw
	}
	return &b, nil
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
