package reconciler

import (
	"context"
	"sync"
)

// InstanceLister is optionally implemented by the Store (*vault.Store does):
// the ids that have documents of their own, in one request.
type InstanceLister interface {
	// Instances returns the ids with a manifest, metadata, backups or secrets.
	Instances(ctx context.Context) (map[string]bool, error)
}

// ownedDocs answers, for an instance the index does not hold, whether Vault
// may hold its metadata or manifest. The first question of a run lists the
// store once; a cold run then reads nothing for instances Vault never saw,
// and a warm run (every instance indexed) never asks.
type ownedDocs struct {
	once sync.Once
	ids  map[string]bool // nil: unknown, read every instance
}

// mayHave is false only when the listing worked and does not name id.
func (o *ownedDocs) mayHave(ctx context.Context, r *run, id string) bool {
	o.once.Do(func() {
		lister, ok := r.m.opts.Store.(InstanceLister)
		if !ok {
			return
		}
		ids, err := lister.Instances(ctx)
		if err != nil {
			r.log.Warn("listing instances failed; reading each instance's records", "error", err)
			return
		}
		o.ids = ids
	})
	return o.ids == nil || o.ids[id]
}
