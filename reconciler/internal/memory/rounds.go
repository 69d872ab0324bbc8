package memory

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
)

// Rounds retries the deployments whose fetch failed in later rounds of the
// same run, instead of in place: a worker never sleeps on one failing
// deployment while the others wait, so a Director that fails some requests
// slows a run by the share it fails (plus the waits between rounds, the
// Policy's Round), not by a backoff per failure. A deployment is tried
// Policy.Attempts more times. It is safe for concurrent use.
type Rounds struct {
	attempts int

	mu    sync.Mutex
	tries map[string]int // failed attempts so far, by deployment
	again []bosh.Deployment
}

// NewRounds is a run's rounds under policy p.
func NewRounds(p Policy) *Rounds {
	return &Rounds{attempts: p.Attempts, tries: map[string]int{}}
}

// Later takes d for the next round when err may pass and its attempts are
// not spent; false: the caller records the failure.
func (r *Rounds) Later(ctx context.Context, d bosh.Deployment, err error) bool {
	if retry.IsTerminal(ctx, err) || errors.Is(err, guard.ErrCircuitOpen) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.tries[d.Name]
	if n >= r.attempts {
		return false
	}
	r.tries[d.Name] = n + 1
	r.again = append(r.again, d)
	return true
}

// Next takes the deployments of the next round, in name order.
func (r *Rounds) Next() []bosh.Deployment {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.again
	r.again = nil
	slices.SortFunc(out, func(a, b bosh.Deployment) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
