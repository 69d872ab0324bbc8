package vault

import (
	"context"
	"encoding/json"
	"hash/maphash"
	"slices"
	"sync"
)

// seenShards are the shards an IndexFrom read (KV v2 only), kept so that
// UpdateOver may write a shard without reading it again: its version, its
// ids, and a digest of what it held, to check that the records Index
// decoded encode back to exactly that. A shard is given out once: after a
// write its version is another.
type seenShards struct {
	count int // the layout's shard count when read
	mu    sync.Mutex
	by    map[int]*seenShard
}

// seenShard is one shard as IndexFrom read it, never changed once made (an
// Index made by IndexFrom shares it with the one it was made from).
type seenShard struct {
	num     int
	version int
	created string // the version's created_time (document.Created)
	exists  bool
	ids     []string
	recs    []*Record // the records of ids, in their order
	sum     uint64    // entriesSum of its entries
}

var entriesSeed = maphash.MakeSeed()

// entriesSum digests a shard's entries whatever their order: the sum of a
// hash of each id and its stored bytes.
func entriesSum(entries map[string]json.RawMessage) uint64 {
	var sum uint64
	var h maphash.Hash
	h.SetSeed(entriesSeed)
	for id, raw := range entries {
		h.Reset()
		h.WriteString(id)
		h.WriteByte(0)
		h.Write(raw)
		sum += h.Sum64()
	}
	return sum
}

// remember keeps sh as read, when it is a plain shard of the layout read
// (not moved, not copied by a re-shard still going on, every record
// decoded without a problem): for UpdateOver and, when it exists, for an
// IndexFrom of idx.
func (idx *Index) remember(sh *shard, clean bool) {
	if idx.seen == nil || sh.count != idx.seen.count || sh.movedTo != 0 || sh.origin != nil || !clean {
		return
	}
	seen := &seenShard{num: sh.num, version: sh.version, created: sh.created, exists: sh.exists,
		ids: make([]string, 0, len(sh.entries)), recs: make([]*Record, 0, len(sh.entries)), sum: entriesSum(sh.entries)}
	for id := range sh.entries {
		seen.ids = append(seen.ids, id)
		seen.recs = append(seen.recs, idx.Records[id])
	}
	idx.seen.by[sh.num] = seen
	if idx.kept != nil && sh.exists && sh.created != "" {
		idx.kept[sh.num] = seen
	}
}

// take gives out shard num of a layout of n shards as idx read it, rebuilt
// from the records idx decoded, once; nil when idx did not keep it, gave it
// out already, or its records no longer encode to what was read.
func (idx *Index) take(n, num int) *shard {
	if idx == nil || idx.seen == nil || idx.seen.count != n {
		return nil
	}
	idx.seen.mu.Lock()
	seen := idx.seen.by[num]
	delete(idx.seen.by, num)
	idx.seen.mu.Unlock()
	if seen == nil {
		return nil
	}
	entries := make(map[string]json.RawMessage, len(seen.ids))
	for _, id := range seen.ids {
		rec := idx.Records[id]
		if rec == nil {
			return nil
		}
		b, err := rec.MarshalJSON() // json.Marshal would check, compact and HTML-escape it again
		if err != nil {
			return nil
		}
		entries[id] = b
	}
	if entriesSum(entries) != seen.sum {
		return nil // stored in another form than this package writes: read it
	}
	return &shard{count: n, num: num, path: shardPath(n, num), entries: entries, version: seen.version, exists: seen.exists}
}

// UpdateOver is Update for a caller that read the index with IndexFrom (base)
// and changes it afterwards: a shard base read, whose records still encode
// to what it held, is written over the version read without being read
// again (once: a second change of it reads it). Another writer's write in
// between fails the check-and-set, and the shard is read and changed again,
// as Update does. A nil base is Update. It reads and writes at most atOnce
// shards at a time (0 or less: as Update, 8; a shard found moved by a
// re-shard meanwhile is followed at Update's pace): a caller whose other
// writes to the same Vault go on meanwhile leaves them room with fewer.
func (ix *Indexes) UpdateOver(ctx context.Context, changes map[string]Change, base *Index, atOnce int) (UpdateResult, error) {
	edits, err := editsOf(changes)
	if err != nil {
		return UpdateResult{}, err
	}
	if atOnce <= 0 {
		atOnce = readParallelism
	}
	return ix.batch.applyOver(ctx, edits, base, atOnce)
}

// known routes the ids whose shard base gives out (a layout of n shards);
// the others are left to be read.
func known(base *Index, n int, ids []string) (routes []routed, rest []string) {
	if base == nil || base.seen == nil || base.seen.count != n {
		return nil, ids
	}
	groups := map[int][]string{}
	for _, id := range ids {
		groups[ShardOf(id, n)] = append(groups[ShardOf(id, n)], id)
	}
	for num, group := range groups {
		if sh := base.take(n, num); sh != nil {
			routes = append(routes, routed{sh: sh, ids: slices.Sorted(slices.Values(group))})
		} else {
			rest = append(rest, group...)
		}
	}
	return routes, rest
}
