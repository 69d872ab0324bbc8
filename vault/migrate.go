package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"sync"

	"golang.org/x/sync/errgroup"
)

// Maintenance moves a legacy Blacksmith index ({mount}/db) into the
// sharded index (Migrate) and writes it back out from the sharded index
// (ExportLegacy). A Store has it (Store.Maintenance).
type Maintenance struct {
	kv    *kv
	docs  *indexDocs
	locks *mountLocks
	log   *slog.Logger
}

// MigrationReport says what Migrate found and did.
type MigrationReport struct {
	// AlreadyMigrated is true when the sharded layout existed: nothing was done.
	AlreadyMigrated bool
	// LegacyFound is true when a legacy index was found at {mount}/db.
	LegacyFound bool
	// Records is the number of legacy records copied into the shards.
	Records int
	// Problems lists legacy records not fully understood, sorted; they were
	// copied byte for byte all the same.
	Problems []error
	// Writes is the number of shard writes issued.
	Writes int
	// LayoutVersion and Shards describe the layout in place afterwards.
	LayoutVersion, Shards int
}

// Migrate moves a legacy Blacksmith index ({mount}/db, one map of instance id
// to record) into the sharded layout, copying every record byte for byte.
// The legacy document is never written or deleted: it stays as the backup of
// the original. The shards are read back and compared before the layout
// document (with its version) is written, so an interrupted migration is
// simply run again. Migrate is idempotent: once the layout exists it does
// nothing. Without a legacy index it just records the layout.
func (m *Maintenance) Migrate(ctx context.Context) (MigrationReport, error) {
	var rep MigrationReport
	if m.kv.version == 1 {
		m.locks.v1.Lock()
		defer m.locks.v1.Unlock()
	}
	l, err := m.docs.readLayout(ctx)
	if err != nil {
		return rep, fmt.Errorf("migrating: %w", err)
	}
	if l == nil {
		legacy, err := m.kv.read(ctx, LegacyIndexPath)
		if err != nil {
			return rep, fmt.Errorf("migrating: reading the legacy index (nothing written): %w", err)
		}
		if l, err = m.migrateLegacy(ctx, legacy, &rep); err != nil {
			return rep, fmt.Errorf("migrating %s: %w", m.kv.display(LegacyIndexPath), err)
		}
	} else {
		rep.AlreadyMigrated = true
	}
	rep.LayoutVersion, rep.Shards = l.Version, l.Shards
	if err := m.docs.boundLayoutVersions(ctx); err != nil {
		m.log.Warn("the index's KV versions are left as they were", "error", err)
	}
	return rep, nil
}

func (m *Maintenance) migrateLegacy(ctx context.Context, legacy document, rep *MigrationReport) (*layout, error) {
	if !legacy.Exists {
		return m.docs.createLayout(ctx, layout{})
	}
	rep.LegacyFound = true
	rep.Records = len(legacy.Data)
	groups := map[int][]string{}
	for id, raw := range legacy.Data {
		_, problems := decodeRecord(m.kv.display(LegacyIndexPath), id, raw)
		rep.Problems = append(rep.Problems, problems...)
		n := ShardOf(id, DefaultShards)
		groups[n] = append(groups[n], id)
	}
	sortErrors(rep.Problems)
	writes, err := m.copyShards(ctx, legacy.Data, groups)
	rep.Writes = writes
	if err != nil {
		return nil, err
	}
	if err := m.verifyShards(ctx, legacy.Data, groups); err != nil {
		return nil, err
	}
	return m.docs.createLayout(ctx, layout{MigratedFrom: m.kv.display(LegacyIndexPath), MigratedRecords: len(legacy.Data)})
}

// copyShards merges the legacy entries into their shards (which may hold
// entries of an interrupted earlier run), with bounded parallelism.
func (m *Maintenance) copyShards(ctx context.Context, legacy map[string]json.RawMessage, groups map[int][]string) (int, error) {
	var (
		mu     sync.Mutex
		writes int
	)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readParallelism)
	for n, ids := range groups {
		g.Go(func() error {
			w, err := m.copyShard(gctx, n, ids, legacy)
			mu.Lock()
			writes += w
			mu.Unlock()
			return err
		})
	}
	return writes, g.Wait()
}

func (m *Maintenance) copyShard(ctx context.Context, n int, ids []string, legacy map[string]json.RawMessage) (int, error) {
	writes := 0
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		sh, err := m.docs.readShard(ctx, DefaultShards, n)
		if err != nil {
			return writes, err
		}
		next := maps.Clone(sh.entries)
		for _, id := range ids {
			if cur, ok := sh.entries[id]; ok && !sameJSON(cur, legacy[id]) {
				return writes, m.notOverwriting(sh.path, id)
			}
			next[id] = legacy[id]
		}
		if maps.EqualFunc(next, sh.entries, func(a, b json.RawMessage) bool { return bytes.Equal(a, b) }) {
			return writes, nil
		}
		writes++
		if err = m.kv.write(ctx, sh.path, next, sh.version); !errors.Is(err, ErrConflict) {
			return writes, err
		}
	}
	return writes, fmt.Errorf("shard %03d: %w", n, ErrConflict)
}

// notOverwriting is the error for a shard entry that an interrupted
// migration did not write: the record is newer than the legacy one.
func (m *Maintenance) notOverwriting(path, id string) error {
	return fmt.Errorf("%s already holds record %q, unlike the legacy index: %w: nothing overwritten; "+
		"either the sharded index was in use and its layout document %s was deleted (write it back, see Index), "+
		"or the legacy index changed after an interrupted migration (compare the two, then delete the shard and migrate again)",
		m.kv.display(path), id, ErrCorrupt, m.kv.display(metaPath))
}

// verifyShards reads the shards back and checks every legacy record is there
// with the same bytes.
func (m *Maintenance) verifyShards(ctx context.Context, legacy map[string]json.RawMessage, groups map[int][]string) error {
	nums := slices.Sorted(maps.Keys(groups))
	shards, err := m.docs.readShards(ctx, DefaultShards, nums, nil, readParallelism)
	if err != nil {
		return fmt.Errorf("verifying: %w", err)
	}
	for _, sh := range shards {
		for _, id := range groups[sh.num] {
			if !sameJSON(sh.entries[id], legacy[id]) {
				return fmt.Errorf("verifying: record %q differs in %s: %w", id, m.kv.display(sh.path), ErrCorrupt)
			}
		}
	}
	return nil
}

// sameJSON compares two JSON values for meaning (key order, spacing and
// number spelling aside).
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if unmarshalNumbers(a, &va) != nil || unmarshalNumbers(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}
