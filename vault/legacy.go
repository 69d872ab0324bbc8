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

// legacyBackupPrefix is where ExportLegacy keeps each legacy index it
// replaces (a document of this product's own folder, never read by it).
const legacyBackupPrefix = layoutRoot + "/legacy/db-"

// LegacyExport says what ExportLegacy found and, applied, did.
type LegacyExport struct {
	// Records is how many records the legacy index holds after (a dry
	// run: would hold).
	Records int `json:"records"`
	// Added, Changed and Removed are the instance ids whose entry the
	// export adds, changes or removes against the legacy index in place
	// (none when there is none: every record is added), sorted.
	Added   []string `json:"added"`
	Changed []string `json:"changed"`
	Removed []string `json:"removed"`
	// Unchanged is how many entries stay as they are.
	Unchanged int `json:"unchanged"`
	// Applied says the legacy index was written (and read back the same).
	Applied bool `json:"applied"`
	// Backup is where the legacy index it replaced was copied first
	// ("" when there was none, or nothing was written).
	Backup string `json:"backup,omitempty"`
}

// ExportLegacy writes the legacy Blacksmith index ({mount}/db, one map of
// instance id to record) from the sharded index, so that an upstream
// Blacksmith can take the instances back: every record as the index keeps
// it, byte for byte (service_id, plan_id and every field the legacy record
// had, known or not, and what the reconciler added). An instance no longer
// in the index (deprovisioned since) leaves the legacy index. Without
// apply nothing is written: the report says what would change. Applied,
// the legacy index in place is copied to blacksmith/legacy/db-{time} first,
// then replaced by check-and-set (ErrConflict when it changed meanwhile:
// nothing overwritten), read back and compared. The product's own layout
// (the sharded index, the instances' documents) is never written.
func (m *Maintenance) ExportLegacy(ctx context.Context, apply bool, now time.Time) (LegacyExport, error) {
	var rep LegacyExport
	l, err := m.docs.readLayout(ctx)
	switch {
	case err != nil:
		return rep, fmt.Errorf("exporting the legacy index: %w", err)
	case l == nil:
		return rep, fmt.Errorf("exporting the legacy index: %w: there is no sharded index to export (never migrated)", ErrNotFound)
	}
	shards, err := m.docs.leaves(ctx, l.Shards, allShards(l.Shards), nil)
	if err != nil {
		return rep, fmt.Errorf("exporting the legacy index: reading the index: %w", err)
	}
	next := map[string]json.RawMessage{}
	for _, sh := range shards {
		maps.Copy(next, sh.entries)
	}
	cur, err := m.kv.read(ctx, LegacyIndexPath)
	if err != nil {
		return rep, fmt.Errorf("exporting the legacy index: reading %s: %w", m.kv.display(LegacyIndexPath), err)
	}
	rep.Records = len(next)
	rep.Added, rep.Changed, rep.Removed = []string{}, []string{}, []string{}
	for id, raw := range next {
		old, ok := cur.Data[id]
		switch {
		case !ok:
			rep.Added = append(rep.Added, id)
		case !sameJSON(old, raw):
			rep.Changed = append(rep.Changed, id)
		default:
			rep.Unchanged++
		}
	}
	for id := range cur.Data {
		if _, ok := next[id]; !ok {
			rep.Removed = append(rep.Removed, id)
		}
	}
	slices.Sort(rep.Added)
	slices.Sort(rep.Changed)
	slices.Sort(rep.Removed)
	if !apply || (cur.Exists && len(rep.Added)+len(rep.Changed)+len(rep.Removed) == 0) {
		return rep, nil
	}
	if cur.Exists {
		rep.Backup = legacyBackupPrefix + now.UTC().Format("20060102T150405.000000000Z")
		if err := m.kv.write(ctx, rep.Backup, cur.Data, noCAS); err != nil {
			return rep, fmt.Errorf("exporting the legacy index: backing up %s (nothing replaced): %w", m.kv.display(LegacyIndexPath), err)
		}
		rep.Backup = m.kv.display(rep.Backup)
	}
	cas := noCAS
	if m.kv.version == 2 {
		cas = cur.Version // 0: create only
	}
	if err := m.kv.write(ctx, LegacyIndexPath, next, cas); err != nil {
		if errors.Is(err, ErrConflict) {
			return rep, fmt.Errorf("exporting the legacy index: %s changed meanwhile, nothing overwritten (export again): %w", m.kv.display(LegacyIndexPath), err)
		}
		return rep, fmt.Errorf("exporting the legacy index: writing %s: %w", m.kv.display(LegacyIndexPath), err)
	}
	back, err := m.kv.read(ctx, LegacyIndexPath)
	if err != nil {
		return rep, fmt.Errorf("exporting the legacy index: reading it back: %w", err)
	}
	if len(back.Data) != len(next) {
		return rep, fmt.Errorf("exporting the legacy index: read back %d records, wrote %d: %w", len(back.Data), len(next), ErrCorrupt)
	}
	for id, raw := range next {
		if !sameJSON(back.Data[id], raw) {
			return rep, fmt.Errorf("exporting the legacy index: record %q reads back differently: %w", id, ErrCorrupt)
		}
	}
	rep.Applied = true
	return rep, nil
}
