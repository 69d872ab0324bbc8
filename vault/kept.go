package vault

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// IndexFrom is Index for a caller that keeps the index it read last
// (prev): on KV v2, a shard prev read whole is not read again when its
// metadata says it is unchanged since (its current version is the one prev
// read, created at the same time, neither deleted nor destroyed), and its
// records are prev's. Vault spends a fifth of a shard read's CPU on a
// metadata read, and a steady run's index read was most of Vault's work.
// A version of a KV v2 document never changes once written, so the records
// are what a read would give. A shard read with a problem, moved or copied
// by a re-shard is read again; so is every shard when the layout has
// another shard count than prev's. On KV v1, or with a nil prev, it is
// Index.
//
// The records prev and the result share must not be changed by either's
// caller (Clone one to change it); this package never changes them.
func (s *Store) IndexFrom(ctx context.Context, prev *Index) (*Index, error) {
	l, err := s.layoutFor(ctx)
	if err != nil {
		return nil, err
	}
	idx := &Index{Records: map[string]*Record{}}
	if l == nil {
		return idx, nil
	}
	idx.Shards = l.Shards
	var reuse map[int]*seenShard
	if s.kv.version == 2 {
		idx.seen = &seenShards{count: l.Shards, by: map[int]*seenShard{}}
		idx.kept = map[int]*seenShard{}
		if prev != nil && prev.seen != nil && prev.seen.count == l.Shards {
			reuse = prev.kept
		}
	}
	shards, err := s.leaves(ctx, l.Shards, allShards(l.Shards), reuse)
	if err != nil {
		return nil, err
	}
	for _, sh := range shards {
		if sh.kept != nil {
			idx.reuse(sh.kept)
			continue
		}
		idx.remember(sh, s.collect(idx, sh))
	}
	sortErrors(idx.Problems)
	return idx, nil
}

// reuse adds a shard kept from an earlier read, unchanged since, to idx.
func (idx *Index) reuse(k *seenShard) {
	for i, id := range k.ids {
		idx.Records[id] = k.recs[i]
	}
	idx.kept[k.num] = k
	idx.seen.by[k.num] = k
}

// unchanged says whether the document at p is still the version k holds,
// from its metadata (KV v2): the current version, created when k's was,
// neither deleted nor destroyed (a deletion time to come counts as
// deleted: the read would soon say so).
func (k *kv) unchanged(ctx context.Context, p string, kept *seenShard) (bool, error) {
	k.reads.Add(1)
	k.checks.Add(1)
	raw, found, err := k.get(ctx, k.metadataPath(p), nil)
	if err != nil {
		return false, fmt.Errorf("reading the metadata of %s: %w", k.display(p), err)
	}
	if !found {
		return false, nil
	}
	var b struct {
		Data *struct {
			Current  int `json:"current_version"`
			Versions map[string]struct {
				Created   json.RawMessage `json:"created_time"`
				Deletion  string          `json:"deletion_time"`
				Destroyed bool            `json:"destroyed"`
			} `json:"versions"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &b); err != nil || b.Data == nil {
		return false, fmt.Errorf("reading the metadata of %s: %w: unparseable response: %s", k.display(p), ErrCorrupt, snippet(raw))
	}
	if b.Data.Current != kept.version {
		return false, nil
	}
	v, ok := b.Data.Versions[strconv.Itoa(kept.version)]
	return ok && string(v.Created) == kept.created && v.Deletion == "" && !v.Destroyed, nil
}
