package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"
)

// Restores put an instance back as one of its backups holds it, keeping
// its bindings' truth (restore_bindings.go). A Store has them
// (Store.Restores).
type Restores struct {
	kv      *kv
	opts    *Options
	log     *slog.Logger
	archive *Archive
	reader  *stateReader
	history *History
	docs    *Documents
	secrets *Secrets
	batch   *batcher
}

// Restore puts the index record, metadata, manifest and (when the backup
// holds them) secrets of id back as they were in backup backupID, after
// backing up the current state with BackupAll (when backups are on), so that
// the secrets it overwrites are kept. A record, metadata or manifest absent
// from the backup is removed; a secret the backup does not name is left
// alone. History is not rolled back: the restored metadata keeps the
// current metadata's history (the backup's only when there is none now),
// plus a "restored" entry. The backup is read and checked whole first: a
// backup with a part that cannot be restored (ErrCorrupt, naming the part)
// or that is over a size bound (ErrTooLarge) changes nothing. The index
// record is written last; then a "restored" Event is appended to id's
// history (AppendEvent). When only that append fails, the restore is
// complete and the error matches ErrEventNotRecorded.
//
// The instance's bindings keep their truth (RestoreReport says how): a
// binding the history says was unbound is not brought back, a live
// binding's document is left as it is, one made after the backup is kept,
// and their list is the backup's and the live one's, less the unbound.
func (rt *Restores) Restore(ctx context.Context, id, backupID string) error {
	_, err := rt.RestoreReported(ctx, id, backupID)
	return err
}

// RestoreReported is Restore, answering what it did with the bindings.
func (rt *Restores) RestoreReported(ctx context.Context, id, backupID string) (RestoreReport, error) {
	if err := validID(id); err != nil {
		return RestoreReport{}, err
	}
	if _, ok := parseBackupName(backupID); !ok {
		return RestoreReport{}, fmt.Errorf("%w: backup id %q", ErrInvalid, backupID)
	}
	b, err := rt.archive.readBackup(ctx, id, backupID)
	if err == nil {
		err = rt.restorable(rt.kv.display(rt.archive.backupPath(id, backupID)), b)
	}
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restoring %s from %s: %w", id, backupID, err)
	}
	rep, err := rt.restoreBindingsTruth(ctx, id, b)
	if err != nil {
		return RestoreReport{}, fmt.Errorf("restoring %s from %s: nothing changed: %w", id, backupID, err)
	}
	saved, err := rt.archive.BackupAll(ctx, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return rep, fmt.Errorf("restoring %s: backing up the current state first: %w", id, err)
	}
	if err := rt.putBack(ctx, id, backupID, b); err != nil {
		return rep, err
	}
	return rep, rt.recordRestore(ctx, id, backupID, saved, rep)
}

// putBack writes the parts of backup b (backupID) of id, the index record
// last; the metadata keeps the current history (when not empty) instead of
// its own.
func (rt *Restores) putBack(ctx context.Context, id, backupID string, b *backupParts) error {
	if err := rt.restoreMetadata(ctx, id, backupID, b.metadata); err != nil {
		return fmt.Errorf("restoring the metadata of %s from %s: %w", id, backupID, err)
	}
	if err := rt.restoreManifest(ctx, id, b.manifest); err != nil {
		return fmt.Errorf("restoring the manifest of %s from %s: %w", id, backupID, err)
	}
	for _, p := range slices.Sorted(maps.Keys(b.secrets)) {
		if err := rt.secrets.putSecret(ctx, p, b.secrets[p]); err != nil {
			return fmt.Errorf("restoring the secrets of %s from %s: %w", id, backupID, err)
		}
	}
	if err := rt.restoreRecord(ctx, id, b.record); err != nil {
		return fmt.Errorf("restoring the record of %s from %s: %w", id, backupID, err)
	}
	return nil
}

// restorable checks the parts of a decoded backup against what the store
// may write, so that a restore does not fail half-way.
func (rt *Restores) restorable(path string, b *backupParts) error {
	tooLarge := func(part string, size, limit int) error {
		return fmt.Errorf("backup %s: its %s is %d bytes: %w (limit %d)", path, part, size, ErrTooLarge, limit)
	}
	if len(b.record) > rt.opts.MaxRecordBytes {
		return tooLarge("record", len(b.record), rt.opts.MaxRecordBytes)
	}
	if b.manifest != nil && len(*b.manifest) > rt.opts.MaxManifestBytes {
		return tooLarge("manifest", len(*b.manifest), rt.opts.MaxManifestBytes)
	}
	for p, raw := range b.secrets {
		if len(raw) > rt.opts.MaxSecretBytes {
			return tooLarge("secret "+p, len(raw), rt.opts.MaxSecretBytes)
		}
		var m map[string]json.RawMessage
		if rt.kv.version == 1 && (json.Unmarshal(raw, &m) != nil || len(m) == 0) {
			return fmt.Errorf("backup %s: %w: its secret %s is empty, which KV v1 cannot store", path, ErrCorrupt, p)
		}
	}
	return nil
}

// recordRestore appends the "restored" event of a complete restore of id
// from backupID; saved is the backup of the state it replaced ("" if none).
func (rt *Restores) recordRestore(ctx context.Context, id, backupID, saved string, rep RestoreReport) error {
	details := map[string]string{"backup": backupID}
	if saved != "" {
		details["previous_state_backup"] = saved
	}
	for _, br := range rep.Bindings { // bounded by the backup's and the live bindings (at most maxSecretPaths)
		details["binding_"+br.Outcome] = strings.TrimPrefix(details["binding_"+br.Outcome]+", "+br.BindingID, ", ")
	}
	e := Event{Kind: "restored", Actor: "operator", Message: "restored from backup " + backupID, Details: details}
	if err := rt.history.AppendEvent(ctx, id, e); err != nil {
		return fmt.Errorf("restored %s from %s: %w: %w", id, backupID, ErrEventNotRecorded, err)
	}
	return nil
}

// historyIn returns the history of id's metadata document doc, read at p:
// nil when there is no metadata or it has no history. A history that does
// not decode is logged and taken as none (the backup taken before the
// restore holds it as it was).
func (rt *Restores) historyIn(id, p string, doc document) []HistoryEntry {
	raw, ok := doc.Data["history"]
	if !ok {
		return nil
	}
	var h []HistoryEntry
	if err := json.Unmarshal(raw, &h); err != nil {
		rt.log.Warn("the current metadata's history does not decode; the restore keeps the backup's",
			"instance", id, "path", rt.kv.display(p), "error", err)
		return nil
	}
	return h
}

// restoreMetadata writes md, the metadata of a backup (nil: none), as id's,
// with the current metadata's history instead of its own when that is not
// empty, and a "restored" entry. Without metadata or history, the metadata
// is removed. Reading the current history and writing are one step: on KV
// v2 a check-and-set on the version read, tried again when another writer
// wrote the document in between (see kv.update), so that no history entry
// written meanwhile is lost. The removal is not conditional (KV v2 has no
// check-and-set delete).
func (rt *Restores) restoreMetadata(ctx context.Context, id, backupID string, md *Metadata) error {
	p := metadataPath(id)
	restored := HistoryEntry{Time: time.Now().UTC().Format(time.RFC3339), Action: "restored", Detail: "from backup " + backupID}
	remove := false
	err := rt.kv.update(ctx, p, func(doc document) (any, error) {
		history := rt.historyIn(id, p, doc)
		if md == nil && len(history) == 0 {
			remove = true
			return nil, nil
		}
		next := &Metadata{}
		if md != nil {
			c := *md
			next = &c
		}
		if len(history) == 0 {
			history = next.History
		}
		next.History = slices.Clone(history)
		next.AddHistory(restored, rt.opts.HistoryCap)
		return rt.docs.encodeMetadata(id, next)
	})
	if err != nil || !remove {
		return err
	}
	return rt.kv.remove(ctx, p)
}

func (rt *Restores) restoreManifest(ctx context.Context, id string, text *string) error {
	if text == nil {
		return rt.kv.remove(ctx, manifestPath(id))
	}
	return rt.docs.PutManifest(ctx, id, *text)
}

func (rt *Restores) restoreRecord(ctx context.Context, id string, raw json.RawMessage) error {
	e := edit{remove: true}
	if raw != nil {
		e = edit{set: raw}
	}
	_, err := rt.batch.apply(ctx, map[string]edit{id: e})
	return err
}
