package reconciler

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// rounds retries the deployments whose fetch failed in later rounds of the
// same run, instead of in place: a worker never sleeps on one failing
// deployment while the others wait, so a Director that fails some requests
// slows a run by the share it fails (plus the waits between rounds), not by
// a backoff per failure. A deployment is tried Config.RetryAttempts more
// times; round n starts once round n-1 is done and the backoff for n-1 has
// passed.
type rounds struct {
	attempts int // Config.RetryAttempts

	mu    sync.Mutex
	tries map[string]int // failed attempts so far, by deployment
	again []bosh.Deployment
}

func newRounds(attempts int) *rounds {
	return &rounds{attempts: attempts, tries: map[string]int{}}
}

// later takes d for the next round when err may pass and its attempts are
// not spent; false: the caller records the failure.
func (r *rounds) later(ctx context.Context, d bosh.Deployment, err error) bool {
	if r == nil || retry.IsTerminal(ctx, err) || errors.Is(err, ErrCircuitOpen) {
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

// next takes the deployments of the next round, in name order.
func (r *rounds) next() []bosh.Deployment {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.again
	r.again = nil
	slices.SortFunc(out, func(a, b bosh.Deployment) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

var (
	deploymentKey = report.DeploymentKey
	instanceKey   = report.InstanceKey
)
