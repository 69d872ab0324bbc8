package reconciler

import (
	"context"
	"sync"
)

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
		ids, err := r.m.opts.Store.Instances(ctx)
		if err != nil {
			r.log.Warn("listing instances failed; reading each instance's records", "error", err)
			return
		}
		o.ids = ids
	})
	return o.ids == nil || o.ids[id]
}
