package vault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// maxAttempts bounds the check-and-set attempts per shard and Update.
const maxAttempts = 50

// Change computes an instance's next index record from its current one. cur
// is a private copy (nil when absent); returning nil leaves the record as it
// is. A Change may be invoked again, on a fresh copy, after a check-and-set
// conflict, so it must not have side effects that cannot be repeated, and it
// must not call the Store. The Changes of one Update are called one at a time.
// A Change that panics fails the Update like one that returns an error.
type Change func(cur *Record) (next *Record, err error)

// UpdateResult says what an Update did.
type UpdateResult struct {
	// Changed lists, sorted, the ids whose records were written.
	Changed []string
	// Writes is the number of Vault writes issued (conflicting ones included).
	Writes int
}

// edit is what an update does to one id: apply a change, remove the entry,
// or set it to stored bytes (restore).
type edit struct {
	change Change
	remove bool
	set    json.RawMessage
}

// batcher writes index changes grouped per shard: one read and at most one
// write per touched shard, check-and-set and re-applied on a conflict,
// following records a re-shard moved (update.go, commit.go).
type batcher struct {
	kv             *kv
	docs           *indexDocs
	locks          *mountLocks
	maxRecordBytes int // Options.MaxRecordBytes
}

// plan is a shard's new content, computed from one read of it.
type plan struct {
	sh      *shard
	ids     []string // the ids of the edits that fall in this shard, sorted
	next    map[string]json.RawMessage
	changed []string
	skipped []error // corrupt records that a change targeted, left untouched
}

// Update applies changes to the index, grouped per shard: one read and at
// most one write per touched shard, and no write for a shard whose content
// encodes to the same bytes. All touched shards are read, and every change
// computed, before anything is written: a failed read or a Change that returns
// an error aborts the whole Update with nothing written. A change to a record
// that is not a JSON object is skipped (the record is kept as it is) and
// reported in the error, matching ErrCorrupt, while the other changes apply.
//
// On KV v2 each shard is written with check-and-set; on a conflict it is
// re-read and its changes re-applied (a Change failing then fails that shard
// only: others may be written already). On KV v1 updates are serialized
// within the process (every Store of the same address and mount). Writes to
// different shards are not atomic together: when a write fails, Changed says
// which records were written.
//
// A change that would store a record whose encoding is over
// Options.MaxRecordBytes (default 32 KiB) fails the Update like a Change
// returning an error (ErrTooLarge, naming the id, the size and the bound):
// nothing is written. A record already stored over the bound is left as it
// is by a change that does not alter it.
func (ix *Indexes) Update(ctx context.Context, changes map[string]Change) (UpdateResult, error) {
	edits, err := editsOf(changes)
	if err != nil {
		return UpdateResult{}, err
	}
	return ix.batch.apply(ctx, edits)
}

// editsOf checks changes and makes them edits.
func editsOf(changes map[string]Change) (map[string]edit, error) {
	edits := make(map[string]edit, len(changes))
	for id, c := range changes {
		if err := validID(id); err != nil {
			return nil, err
		}
		if c == nil {
			return nil, fmt.Errorf("%w: nil change for %s", ErrInvalid, id)
		}
		edits[id] = edit{change: c}
	}
	return edits, nil
}

// Remove backs the instance up (when backups are on) and then removes its
// index entry. Its per-instance paths (manifest, metadata, secrets, backups)
// are kept, and its backup holds no secret: to delete the secrets too, with
// a backup that holds them, see RemoveAll. Removing an absent instance is
// not an error.
func (ix *Indexes) Remove(ctx context.Context, id string) error {
	if err := validID(id); err != nil {
		return err
	}
	if _, err := ix.archive.Backup(ctx, id); err != nil && !errors.Is(err, ErrNotFound) {
		return fmt.Errorf("removing %s: backing up first: %w", id, err)
	}
	if _, err := ix.batch.apply(ctx, map[string]edit{id: {remove: true}}); err != nil {
		return fmt.Errorf("removing %s: %w", id, err)
	}
	return nil
}

func (bt *batcher) apply(ctx context.Context, edits map[string]edit) (UpdateResult, error) {
	return bt.applyOver(ctx, edits, nil, readParallelism)
}

// applyOver applies edits, reading and writing at most atOnce shards at a
// time; the shards base gives out are not read.
func (bt *batcher) applyOver(ctx context.Context, edits map[string]edit, base *Index, atOnce int) (UpdateResult, error) {
	if len(edits) == 0 {
		return UpdateResult{}, nil
	}
	if bt.kv.version == 1 {
		bt.locks.v1.Lock()
		defer bt.locks.v1.Unlock()
	}
	l, err := bt.docs.ensureLayout(ctx)
	if err != nil {
		return UpdateResult{}, fmt.Errorf("updating the index: nothing written: %w", err)
	}
	routes, rest := known(base, l.Shards, slices.Collect(maps.Keys(edits)))
	read, err := bt.docs.route(ctx, l.Shards, rest, atOnce)
	if err != nil {
		return UpdateResult{}, fmt.Errorf("updating the index: nothing written: %w", err)
	}
	routes = append(routes, read...)
	plans := make([]*plan, len(routes))
	for i, r := range routes {
		if plans[i], err = bt.plan(r.sh, r.ids, edits); err != nil {
			return UpdateResult{}, fmt.Errorf("updating the index: nothing written: %w", err)
		}
	}
	return bt.commitAll(ctx, plans, edits, atOnce)
}

// plan applies the edits of ids to a shard as read.
func (bt *batcher) plan(sh *shard, ids []string, edits map[string]edit) (*plan, error) {
	p := &plan{sh: sh, ids: ids, next: maps.Clone(sh.entries)}
	for _, id := range ids {
		e := edits[id]
		raw, present := sh.entries[id]
		if e.remove {
			if present {
				delete(p.next, id)
				p.changed = append(p.changed, id)
			}
			continue
		}
		b := e.set
		if e.change != nil {
			var err error
			if b, err = p.applyChange(bt.kv.display(sh.path), id, e.change); err != nil {
				return nil, err
			}
		}
		if b == nil || present && bytes.Equal(b, raw) {
			continue
		}
		if len(b) > bt.maxRecordBytes {
			return nil, fmt.Errorf("record of %s is %d bytes: %w (limit %d)", id, len(b), ErrTooLarge, bt.maxRecordBytes)
		}
		p.next[id] = b
		p.changed = append(p.changed, id)
	}
	return p, nil
}

// applyChange runs change on the current record of id and returns the new
// bytes (nil: leave it as it is). A stored value that is not a record is
// not handed to the change: it is left alone and reported in p.skipped.
func (p *plan) applyChange(path, id string, change Change) (json.RawMessage, error) {
	var cur *Record
	if raw, present := p.sh.entries[id]; present {
		rec, problems := decodeRecord(path, id, raw)
		if rec == nil {
			p.skipped = append(p.skipped, problems...)
			return nil, nil
		}
		cur = rec
	}
	next, err := call(change, cur)
	if err != nil {
		return nil, fmt.Errorf("change of %s: %w", id, err)
	}
	if next == nil {
		return nil, nil
	}
	b, err := json.Marshal(next)
	if err != nil {
		return nil, fmt.Errorf("encoding the record of %s: %w", id, err)
	}
	return b, nil
}

// call runs a Change and turns a panic into an error: after a conflict a
// Change runs again on a writer goroutine, where a panic would end the
// process.
func call(change Change, cur *Record) (next *Record, err error) {
	defer func() {
		if r := recover(); r != nil {
			next, err = nil, fmt.Errorf("panicked: %v", r)
		}
	}()
	return change(cur)
}
