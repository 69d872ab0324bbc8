package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// A re-shard moves the index to a layout of more shards, online: the broker
// and the reconciler keep reading and writing it while it runs, and a
// re-shard interrupted at any point (a kill -9 included) loses nothing and
// is finished by the next call.
//
// The new count M is a power-of-two multiple of the current one N, so that
// the records of old shard i go to the new shards i, i+N, i+2N, ... (an id's
// hash modulo M, modulo N, is its old shard). The steps:
//
//  1. the layout document records the re-shard in progress ("reshard":
//     {"to": M}), by check-and-set;
//  2. each old shard is moved: read (version v), its records written to its
//     new shards (each by check-and-set on the version read), then the old
//     shard replaced, by check-and-set on v, with the marker
//     {"blacksmith/moved_to": M}. A writer that changed the old shard after
//     it was read makes that last write fail: the shard is read and moved
//     again. A writer that finds the marker (its own check-and-set failed,
//     or it read the marker) follows the records to the new shard;
//  3. once every old shard is a marker, the layout document says M shards
//     (check-and-set) and records the re-shard in "resharded".
//
// Readers follow markers, so an index read in the middle of a re-shard sees
// every record once. Nothing is deleted: the markers stay where the old
// shards were. On KV v1 (no check-and-set) the re-shard holds the process's
// index lock, as every index update there does; another process writing the
// same KV v1 mount meanwhile can lose an update, as it can at any time.

// movedKey marks a shard whose records moved; originKey, in a new shard,
// names the old shard (and its version) the re-shard copied the records
// from, until a writer writes the new shard (its write drops it). An
// instance id has no slash, so no record can take their place.
const (
	movedKey  = "blacksmith/moved_to"
	originKey = "blacksmith/moved_from"
)

// origin is the old shard, and its version, a new shard's records were
// copied from. It lets a re-shard that read an old shard before another
// re-shard moved it (two at once) see that it is late: it never writes a
// new shard that a writer wrote since, nor one copied from a newer version.
type origin struct {
	Count   int `json:"count"`
	Shard   int `json:"shard"`
	Version int `json:"version"`
}

// errLate is a re-shard finding its read of an old shard outdated.
var errLate = errors.New("outdated by another re-shard or a writer")

const (
	// ReshardAbove is the number of records per shard above which
	// ShardsFor asks for more shards.
	ReshardAbove = 256
	// TargetPerShard is the number of records per shard ShardsFor aims at:
	// a run writes the whole shard of each record it changes, and Vault's
	// CPU follows the bytes it parses (at 100,000 instances over 4
	// Directors, a run where 1% changed took ~6.3 s at 128, ~5.9 at 64,
	// for 1,024 more metadata checks in each run: 1.5 -> 1.7 s).
	TargetPerShard = 64
)

// reshardState is the re-shard in progress, in the layout document.
type reshardState struct {
	To        int    `json:"to"`
	StartedAt string `json:"started_at"`
}

// reshardDone is a re-shard done, in the layout document's history.
type reshardDone struct {
	From      int    `json:"from"`
	To        int    `json:"to"`
	StartedAt string `json:"started_at"`
	DoneAt    string `json:"done_at"`
}

// ReshardReport says what Reshard did.
type ReshardReport struct {
	// From and To are the shard counts before and after.
	From, To int
	// AlreadyDone is set when the index had To shards or more already.
	AlreadyDone bool
	// Resumed is set when a re-shard in progress was finished.
	Resumed bool
	// Moved counts the old shards this call moved (others were moved by an
	// earlier, interrupted call); Records the records they held.
	Moved, Records int
	// Writes counts the Vault writes issued.
	Writes int
}

// validGrowth reports whether an index of from shards may be re-sharded to
// to shards: a larger power-of-two multiple, at most maxShards.
func validGrowth(from, to int) bool {
	if from < 1 || to <= from || to > maxShards || to%from != 0 {
		return false
	}
	k := to / from
	return k&(k-1) == 0
}

// ShardsFor returns the shard count an index of records records should
// have when it has cur shards: cur while it holds at most ReshardAbove
// records per shard, else the smallest power-of-two multiple of cur that
// brings it to TargetPerShard or fewer, at most maxShards (4096).
func ShardsFor(cur, records int) int {
	if cur < 1 || records <= cur*ReshardAbove {
		return cur
	}
	n := cur
	for n*TargetPerShard < records && n*2 <= maxShards {
		n *= 2
	}
	return n
}

// reshardStep is called after each step of a re-shard is written (specs
// interrupt a re-shard there).
var reshardStep = func(string) {}

// resharder moves the index to a layout of more shards (see above).
type resharder struct {
	kv    *kv
	docs  *indexDocs
	locks *mountLocks
}

// run is Indexes.Reshard.
func (rs *resharder) run(ctx context.Context, to int) (ReshardReport, error) {
	var rep ReshardReport
	if rs.kv.version == 1 {
		rs.locks.v1.Lock()
		defer rs.locks.v1.Unlock()
	}
	l, version, err := rs.docs.readLayoutVersion(ctx)
	if err == nil && l == nil {
		// A new index: its layout is written as the first writer would
		// write it, then grown while its shards are empty.
		if _, err = rs.docs.ensureLayout(ctx); err == nil {
			rep.Writes++
			l, version, err = rs.docs.readLayoutVersion(ctx)
		}
	}
	switch {
	case err != nil:
		return rep, fmt.Errorf("re-sharding: %w", err)
	case l == nil:
		return rep, fmt.Errorf("re-sharding: %w: the index layout was not written", ErrNotFound)
	}
	rep.From, rep.To = l.Shards, to
	if l.Reshard != nil {
		rep.To, rep.Resumed = l.Reshard.To, true
	} else {
		if to <= l.Shards {
			rep.To, rep.AlreadyDone = l.Shards, true
			return rep, nil
		}
		if !validGrowth(l.Shards, to) {
			return rep, fmt.Errorf("re-sharding from %d to %d shards: %w: the target must be a larger power-of-two multiple, at most %d",
				l.Shards, to, ErrInvalid, maxShards)
		}
		l.Reshard = &reshardState{To: to, StartedAt: time.Now().UTC().Format(time.RFC3339)}
		rep.Writes++
		if err := rs.kv.write(ctx, metaPath, l, rs.kv.cas(version)); err != nil {
			return rep, fmt.Errorf("re-sharding: recording the re-shard in %s: %w", rs.kv.display(metaPath), err)
		}
		reshardStep("start")
	}
	if l.MaxVersions == IndexMaxVersions { // the new shards keep as few versions as the old ones
		_, w, err := rs.docs.boundIndexVersions(ctx, rep.To)
		rep.Writes += w
		if err != nil {
			return rep, fmt.Errorf("re-sharding from %d to %d shards: %w", rep.From, rep.To, err)
		}
	}
	if err := rs.moveAll(ctx, rep.From, rep.To, &rep); err != nil {
		return rep, fmt.Errorf("re-sharding from %d to %d shards: %w (what was moved stays moved: run it again)", rep.From, rep.To, err)
	}
	if err := rs.finishReshard(ctx, rep.From, rep.To, &rep); err != nil {
		return rep, fmt.Errorf("re-sharding from %d to %d shards: %w (run it again)", rep.From, rep.To, err)
	}
	reshardStep("done")
	return rep, nil
}

// readLayoutVersion returns the layout and the KV v2 version of its document.
func (d *indexDocs) readLayoutVersion(ctx context.Context) (*layout, int, error) {
	doc, err := d.kv.read(ctx, metaPath)
	if err != nil {
		return nil, 0, fmt.Errorf("reading the index layout: %w", err)
	}
	if err := d.notDeleted("index layout", metaPath, doc); err != nil || !doc.Exists {
		return nil, 0, err
	}
	l, err := parseLayout(d.kv.display(metaPath), doc.Data)
	return l, doc.Version, err
}

// moveAll moves every shard of the old layout, a few at a time.
func (rs *resharder) moveAll(ctx context.Context, from, to int, rep *ReshardReport) error {
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readParallelism)
	for i := range from {
		g.Go(func() error {
			records, writes, moved, err := rs.moveShard(gctx, from, to, i)
			mu.Lock()
			defer mu.Unlock()
			rep.Writes += writes
			if moved {
				rep.Moved++
				rep.Records += records
			}
			return err
		})
	}
	return g.Wait()
}

// moveShard moves old shard i (see above); moved is false when an earlier
// call had moved it.
func (rs *resharder) moveShard(ctx context.Context, from, to, i int) (records, writes int, moved bool, err error) {
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		sh, err := rs.docs.readShard(ctx, from, i)
		if err != nil {
			return 0, writes, false, err
		}
		switch sh.movedTo {
		case to:
			return 0, writes, false, nil
		case 0:
		default:
			return 0, writes, false, fmt.Errorf("%s: %w: moved to %d shards, not %d", rs.kv.display(sh.path), ErrCorrupt, sh.movedTo, to)
		}
		reshardStep(fmt.Sprintf("read %d", i))
		w, err := rs.writeChildren(ctx, sh, to)
		writes += w
		if errors.Is(err, ErrConflict) || errors.Is(err, errLate) {
			continue // read it again: moved since, or changed
		}
		if err != nil {
			return 0, writes, false, err
		}
		writes++
		err = rs.kv.write(ctx, sh.path, map[string]int{movedKey: to}, rs.kv.cas(sh.version))
		if errors.Is(err, ErrConflict) {
			continue // a writer changed it after the read: move it again
		}
		if err != nil {
			return 0, writes, false, fmt.Errorf("marking %s moved: %w", rs.kv.display(sh.path), err)
		}
		reshardStep(fmt.Sprintf("moved %d", i))
		return len(sh.entries), writes, true, nil
	}
	return 0, writes, false, fmt.Errorf("moving %s: %w: it kept changing", rs.kv.display(shardPath(from, i)), ErrConflict)
}

// writeChildren writes the records of old shard sh to the shards of a
// layout of to shards they belong in: i, i+from, i+2*from, ..., each whole
// with its origin. What an interrupted move wrote there from an older
// version of sh is replaced; a new shard a writer wrote (no origin), or one
// copied from a newer version of sh, means this read of sh is late (errLate):
// sh is read again. A record that was misplaced
// in sh (its id hashes elsewhere) goes to the first, still misplaced, and
// still reported by Index: kept, never lost.
func (rs *resharder) writeChildren(ctx context.Context, sh *shard, to int) (int, error) {
	from := sh.count
	children := map[int]map[string]json.RawMessage{}
	for k := range to / from {
		children[sh.num+k*from] = map[string]json.RawMessage{}
	}
	for id, raw := range sh.entries {
		j := ShardOf(id, to)
		if j%from != sh.num {
			j = sh.num
		}
		children[j][id] = raw
	}
	writes := 0
	for _, j := range slices.Sorted(maps.Keys(children)) {
		cur, err := rs.docs.readShard(ctx, to, j)
		if err != nil {
			return writes, err
		}
		if cur.movedTo != 0 {
			return writes, fmt.Errorf("%s: %w: already moved on, while %s is not", rs.kv.display(cur.path), ErrCorrupt, rs.kv.display(sh.path))
		}
		switch {
		case cur.exists && cur.origin == nil:
			// A writer wrote it: it found sh moved, so this read of sh is
			// outdated (or the shard was written by hand).
			return writes, fmt.Errorf("%s: %w", rs.kv.display(cur.path), errLate)
		case cur.origin != nil && cur.origin.Version > sh.version:
			return writes, fmt.Errorf("%s: copied from version %d of %s, this read is version %d: %w",
				rs.kv.display(cur.path), cur.origin.Version, rs.kv.display(sh.path), sh.version, errLate)
		}
		next := children[j]
		if !cur.exists && len(next) == 0 {
			continue
		}
		if cur.origin != nil && cur.origin.Version == sh.version {
			continue // an interrupted move wrote it from this very version
		}
		writes++
		if len(next) == 0 && rs.kv.version == 1 {
			err = rs.kv.remove(ctx, cur.path)
		} else {
			body := maps.Clone(next)
			body[originKey], _ = json.Marshal(origin{Count: sh.count, Shard: sh.num, Version: sh.version})
			err = rs.kv.write(ctx, cur.path, encodeEntries(body), rs.kv.cas(cur.version))
		}
		if err != nil {
			return writes, fmt.Errorf("writing %s: %w", rs.kv.display(cur.path), err)
		}
		reshardStep(fmt.Sprintf("child %d of %d", j, sh.num))
	}
	return writes, nil
}

// finishReshard checks that every old shard is moved, then records the new
// count in the layout document.
func (rs *resharder) finishReshard(ctx context.Context, from, to int, rep *ReshardReport) error {
	old, err := rs.docs.readShards(ctx, from, allShards(from), nil, readParallelism)
	if err != nil {
		return err
	}
	for _, sh := range old {
		if sh.movedTo != to {
			return fmt.Errorf("%s: %w: not moved yet", rs.kv.display(sh.path), ErrConflict)
		}
	}
	l, version, err := rs.docs.readLayoutVersion(ctx)
	if err != nil {
		return err
	}
	if l != nil && l.Reshard == nil && l.Shards == to {
		return nil // another process finished it
	}
	if l == nil || l.Reshard == nil || l.Shards != from || l.Reshard.To != to {
		return fmt.Errorf("%s: %w: the layout changed during the re-shard", rs.kv.display(metaPath), ErrConflict)
	}
	l.Resharded = append(l.Resharded, reshardDone{From: from, To: to, StartedAt: l.Reshard.StartedAt,
		DoneAt: time.Now().UTC().Format(time.RFC3339)})
	l.Shards, l.Reshard = to, nil
	rep.Writes++
	if err := rs.kv.write(ctx, metaPath, l, rs.kv.cas(version)); err != nil {
		return fmt.Errorf("recording %d shards in %s: %w", to, rs.kv.display(metaPath), err)
	}
	return nil
}
