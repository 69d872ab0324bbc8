package vault

import (
	"context"
	"encoding/json"
	"fmt"

	"golang.org/x/sync/errgroup"
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
}

// shard is one index document as read.
type shard struct {
	num     int
	path    string // relative to the mount
	entries map[string]json.RawMessage
	version int // KV v2 version, for check-and-set
}

// Index reads every shard of the index. Any failed read fails the whole
// call: it never returns a partial map.
func (s *Store) Index(ctx context.Context) (*Index, error) {
	l, err := s.layoutFor(ctx)
	if err != nil {
		return nil, err
	}
	idx := &Index{Records: map[string]*Record{}}
	if l == nil {
		return idx, nil
	}
	all := make([]int, l.Shards)
	for i := range all {
		all[i] = i
	}
	shards, err := s.readShards(ctx, all)
	if err != nil {
		return nil, err
	}
	for _, sh := range shards {
		s.collect(idx, sh, l.Shards)
	}
	sortErrors(idx.Problems)
	return idx, nil
}

// collect adds the records of one shard of an index of n shards to idx, and
// what is wrong with them to idx.Problems.
func (s *Store) collect(idx *Index, sh *shard, n int) {
	path := s.kv.display(sh.path)
	for id, raw := range sh.entries {
		if want := ShardOf(id, n); want != sh.num {
			idx.Problems = append(idx.Problems, &RecordError{Path: path, ID: id,
				Err: fmt.Errorf("misplaced: belongs in %s, ignored", s.kv.display(ShardPath(want)))})
			continue
		}
		rec, problems := decodeRecord(path, id, raw)
		idx.Problems = append(idx.Problems, problems...)
		if rec != nil {
			idx.Records[id] = rec
		}
	}
}

// Record returns the index record of id, or nil, nil when there is none.
// A record that is not a JSON object is an error matching ErrCorrupt.
func (s *Store) Record(ctx context.Context, id string) (*Record, error) {
	raw, path, err := s.recordRaw(ctx, id)
	if err != nil || raw == nil {
		return nil, err
	}
	rec, problems := decodeRecord(path, id, raw)
	if rec == nil {
		return nil, problems[0]
	}
	for _, p := range problems {
		s.log.Warn("index record field kept as is", "error", p)
	}
	return rec, nil
}

// recordRaw returns the stored bytes of id's index entry (nil when absent)
// and the path of the shard that holds it.
func (s *Store) recordRaw(ctx context.Context, id string) (json.RawMessage, string, error) {
	if err := validID(id); err != nil {
		return nil, "", err
	}
	l, err := s.layoutFor(ctx)
	if err != nil || l == nil {
		return nil, "", err
	}
	sh, err := s.readShard(ctx, ShardOf(id, l.Shards))
	if err != nil {
		return nil, "", err
	}
	return sh.entries[id], s.kv.display(sh.path), nil
}

// readShards reads the given shards with bounded parallelism; the first
// failure cancels the rest and is returned.
func (s *Store) readShards(ctx context.Context, nums []int) ([]*shard, error) {
	out := make([]*shard, len(nums))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readParallelism)
	for i, n := range nums {
		g.Go(func() error {
			sh, err := s.readShard(gctx, n)
			out[i] = sh
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, fmt.Errorf("reading the index: %w", err)
	}
	return out, nil
}

func (s *Store) readShard(ctx context.Context, n int) (*shard, error) {
	p := ShardPath(n)
	doc, err := s.kv.read(ctx, p)
	if err == nil {
		err = s.notDeleted("index shard", p, doc)
	}
	if err != nil {
		return nil, err
	}
	entries := doc.Data
	if entries == nil {
		entries = map[string]json.RawMessage{}
	}
	return &shard{num: n, path: p, entries: entries, version: doc.Version}, nil
}
