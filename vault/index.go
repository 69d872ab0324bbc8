package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

// readParallelism bounds the concurrent shard reads of one call.
const readParallelism = 8

// Index is every record of the index, as read in one pass.
type Index struct {
	// Records maps instance id to record.
	Records map[string]*Record
	// Problems lists the records that could not be fully decoded, each a
	// *RecordError naming its path and id, sorted. A record that is not a JSON
	// object, or that sits in a shard its id does not hash to, is absent
	// from Records; one with a field of an unexpected type is present, with
	// the raw field in Extra.
	Problems []error
	// Shards is the number of shards of the layout read (0: no index yet);
	// see ShardsFor and Reshard.
	Shards int

	seen *seenShards        // for UpdateOver (KV v2)
	kept map[int]*seenShard // for IndexFrom (KV v2): the shards read whole, by number
}

// shard is one index document as read.
type shard struct {
	count   int // the number of shards of the layout it belongs to
	num     int
	path    string // relative to the mount
	entries map[string]json.RawMessage
	version int    // KV v2 version, for check-and-set
	created string // KV v2: the version's created_time (document.Created)
	exists  bool   // the document exists
	// movedTo is the shard count of the layout its records moved to (a
	// re-shard, reshard.go), 0 when they are here.
	movedTo int
	// origin is the old shard a re-shard copied its records from, while no
	// writer has written it since (reshard.go); nil otherwise.
	origin *origin
	// kept is the shard as an earlier read kept it, when IndexFrom found it
	// unchanged since (then entries is nil: its records are kept's).
	kept *seenShard
}

// Index reads every shard of the index. Any failed read fails the whole
// call: it never returns a partial map.
func (ix *Indexes) Index(ctx context.Context) (*Index, error) { return ix.docs.index(ctx, nil, false) }

// allShards lists 0..n-1.
func allShards(n int) []int {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// collect adds the records of one shard to idx, and what is wrong with them
// to idx.Problems; clean says nothing was.
func (d *indexDocs) collect(idx *Index, sh *shard) (clean bool) {
	path := d.kv.display(sh.path)
	clean = true
	same := sharer{}
	for id, raw := range sh.entries {
		if want := ShardOf(id, sh.count); want != sh.num {
			idx.Problems = append(idx.Problems, &RecordError{Path: path, ID: id,
				Err: fmt.Errorf("misplaced: belongs in %s, ignored", d.kv.display(shardPath(sh.count, want)))})
			clean = false
			continue
		}
		rec, problems := decodeRecord(path, id, raw)
		idx.Problems = append(idx.Problems, problems...)
		clean = clean && rec != nil && len(problems) == 0
		if rec != nil {
			same.record(rec)
			idx.Records[id] = rec
		}
	}
	return clean
}

// maxShared bounds the strings a sharer keeps.
const maxShared = 64

// sharer makes the records of one shard share their equal strings in the
// fields most records repeat (the service, plan, Director, match strategy,
// the time of the run that wrote them), which the kept index holds between
// runs: ~90 bytes a record.
type sharer map[string]string

func (sh sharer) of(s *string) {
	if v, ok := sh[*s]; ok {
		*s = v
	} else if len(sh) < maxShared {
		sh[*s] = *s
	}
}

func (sh sharer) record(r *Record) {
	for _, s := range []*string{&r.ServiceID, &r.PlanID, &r.MaintenanceVersion, &r.ReconciledAt, &r.MatchStrategy,
		&r.Director, &r.OrganizationGUID, &r.SpaceGUID} {
		sh.of(s)
	}
}

// Record returns the index record of id, or nil, nil when there is none.
// A record that is not a JSON object is an error matching ErrCorrupt.
func (ix *Indexes) Record(ctx context.Context, id string) (*Record, error) {
	raw, path, err := ix.docs.recordRaw(ctx, id)
	if err != nil || raw == nil {
		return nil, err
	}
	rec, problems := decodeRecord(path, id, raw)
	if rec == nil {
		return nil, problems[0]
	}
	for _, p := range problems {
		ix.log.Warn("index record field kept as is", "error", p)
	}
	return rec, nil
}

// recordRaw returns the stored bytes of id's index entry (nil when absent)
// and the path of the shard that holds it. Once a layout was read, the shard
// it names is read beside the layout (a backup is taken before every change
// of an instance, and the two reads one after the other were a round trip
// of each); a layout of another shard count reads the shard again.
func (d *indexDocs) recordRaw(ctx context.Context, id string) (json.RawMessage, string, error) {
	if err := validID(id); err != nil {
		return nil, "", err
	}
	var l *layout
	var routes []routed
	guess := int(d.count.Load())
	if guess == 0 {
		var err error
		if l, err = d.layoutFor(ctx); err != nil || l == nil {
			return nil, "", err
		}
	} else {
		g, gctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) {
			l, err = d.layoutFor(gctx)
			return err
		})
		var guessed error
		g.Go(func() error {
			routes, guessed = d.route(gctx, guess, []string{id}, readParallelism)
			return nil // the layout says whether the guess stands
		})
		if err := g.Wait(); err != nil || l == nil {
			return nil, "", err
		}
		if guessed != nil || l.Shards != guess {
			routes = nil
		}
	}
	if routes == nil {
		var err error
		if routes, err = d.route(ctx, l.Shards, []string{id}, readParallelism); err != nil {
			return nil, "", err
		}
	}
	sh := routes[0].sh
	return sh.entries[id], d.kv.display(sh.path), nil
}

// leaves reads shards nums of a layout of n shards and, in place of a shard
// whose records moved to a layout of more shards, the shards they moved to.
func (d *indexDocs) leaves(ctx context.Context, n int, nums []int, reuse *reuse) ([]*shard, error) {
	shards, err := d.readShards(ctx, n, nums, reuse, readParallelism)
	if err != nil {
		return nil, err
	}
	out := make([]*shard, 0, len(shards))
	moved := map[int][]int{} // the count they moved to -> the shards to read there
	for _, sh := range shards {
		if sh.movedTo == 0 {
			out = append(out, sh)
			continue
		}
		for k := range sh.movedTo / n {
			moved[sh.movedTo] = append(moved[sh.movedTo], sh.num+k*n)
		}
	}
	for _, to := range slices.Sorted(maps.Keys(moved)) {
		more, err := d.leaves(ctx, to, moved[to], nil)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// routed is a shard that holds some ids, read.
type routed struct {
	sh  *shard
	ids []string // sorted
}

// route reads the shards that hold ids in a layout of n shards, following
// the shards whose records moved to a layout of more shards.
func (d *indexDocs) route(ctx context.Context, n int, ids []string, atOnce int) ([]routed, error) {
	groups := map[int][]string{}
	for _, id := range ids {
		groups[ShardOf(id, n)] = append(groups[ShardOf(id, n)], id)
	}
	shards, err := d.readShards(ctx, n, slices.Sorted(maps.Keys(groups)), nil, atOnce)
	if err != nil {
		return nil, err
	}
	var out []routed
	moved := map[int][]string{}
	for _, sh := range shards {
		if sh.movedTo == 0 {
			out = append(out, routed{sh: sh, ids: slices.Sorted(slices.Values(groups[sh.num]))})
			continue
		}
		moved[sh.movedTo] = append(moved[sh.movedTo], groups[sh.num]...)
	}
	for _, to := range slices.Sorted(maps.Keys(moved)) {
		more, err := d.route(ctx, to, moved[to], atOnce)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// readShards reads the given shards, at most atOnce at a time; the first
// failure cancels the rest and is returned.
func (d *indexDocs) readShards(ctx context.Context, count int, nums []int, reuse *reuse, atOnce int) ([]*shard, error) {
	out := make([]*shard, len(nums))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(atOnce)
	for i, n := range nums {
		g.Go(func() error {
			if sh := d.sameAsKept(gctx, reuse, count, n); sh != nil {
				out[i] = sh
				return nil
			}
			sh, err := d.readShard(gctx, count, n)
			out[i] = sh
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("reading the index: %w", err)
	}
	return out, nil
}

// readShard reads shard n of a layout of count shards. A shard whose records
// moved (its document is the marker {"blacksmith/moved_to": M}) comes back
// with movedTo set and no entries.
func (d *indexDocs) readShard(ctx context.Context, count, n int) (*shard, error) {
	p := shardPath(count, n)
	doc, err := d.kv.read(ctx, p)
	if err == nil {
		err = d.notDeleted("index shard", p, doc)
	}
	if err != nil {
		return nil, err
	}
	entries := doc.Data
	if entries == nil {
		entries = map[string]json.RawMessage{}
	}
	sh := &shard{count: count, num: n, path: p, entries: entries, version: doc.Version, created: doc.Created, exists: doc.Exists}
	if raw, ok := entries[movedKey]; ok {
		var to int
		if len(entries) != 1 || json.Unmarshal(raw, &to) != nil || !validGrowth(count, to) {
			return nil, fmt.Errorf("index shard %s: %w: a moved shard must hold only %q with a larger power-of-two multiple of %d, at most %d; it holds %d entries, %s",
				d.kv.display(p), ErrCorrupt, movedKey, count, maxShards, len(entries), textcut.Marked(string(raw), 40, "..."))
		}
		sh.movedTo, sh.entries = to, map[string]json.RawMessage{}
	}
	if raw, ok := entries[originKey]; ok {
		var o origin
		if err := json.Unmarshal(raw, &o); err != nil || o.Count < 1 || o.Version < 0 {
			return nil, fmt.Errorf("index shard %s: %w: %q is not an origin: %s", d.kv.display(p), ErrCorrupt, originKey, textcut.Marked(string(raw), 60, "..."))
		}
		sh.origin = &o
		delete(sh.entries, originKey) // a writer's write drops it
	}
	return sh, nil
}
