package run

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// listing is what the listing phase found, the input of every phase after
// it: the deployments listed and the index as read at the start.
type listing struct {
	index  map[string]*vault.Record // as read at the start; never changed
	base   *vault.Index             // the index read, index its Records: what index changes are written over
	byDep  map[string]string        // deployment name -> instance id, as the index names them
	listed map[string]bool          // the deployments listed
	locked map[string]bool          // the listed deployments a task holds
}

// newListing is the listing of the index idx as read, before the
// deployments are known (listed adds them).
func newListing(idx *vault.Index) listing {
	l := listing{index: idx.Records, base: idx, byDep: make(map[string]string, len(idx.Records)), locked: map[string]bool{}}
	for id, rec := range l.index {
		l.byDep[rec.Deployment(id)] = id
	}
	return l
}

// with is l with the deployments deps (one per name).
func (l listing) with(deps []bosh.Deployment) listing {
	l.listed = make(map[string]bool, len(deps))
	for _, d := range deps {
		l.listed[d.Name] = true
		if d.Locked {
			l.locked[d.Name] = true
		}
	}
	return l
}

// list lists every Director and reads the index at once, with retries, and
// keeps one deployment per name: the one on the Director an owned record
// names (a deployment of its name elsewhere is a conflict).
func (r *run) list(ctx context.Context) ([]bosh.Deployment, error) {
	var all []bosh.Deployment
	var idx *vault.Index
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		all, err = r.fleet.List(gctx)
		return err
	})
	g.Go(func() error {
		return r.policy.Do(gctx, "step", "reading the index", func(ctx context.Context) (err error) {
			if idx, err = r.vault.Index.IndexFrom(ctx, r.p.Index.Get()); err == nil {
				r.p.Index.Put(idx) // kept even when the listing fails
			}
			return err
		})
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, p := range idx.Problems {
		r.log.Warn("index record not fully readable, kept as is", "error", p)
	}
	seen := newListing(idx)
	deps, conflicts := r.fleet.Choose(all, func(name string) (string, string, bool) {
		id, ok := seen.byDep[name]
		if rec := seen.index[id]; ok && rec.Owned() {
			return id, rec.Director, true
		}
		return "", "", false
	})
	r.seen, r.shards = seen.with(deps), idx.Shards
	for _, c := range conflicts {
		r.conflict(c, owned)
	}
	r.owners = owners{scope: r.opts.Scope, matcher: r.p.Matcher, index: r.seen.index, byDep: r.seen.byDep}
	r.p.Cache.Purge(deps)
	return deps, nil
}
