package reconciler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// inFlightStates are the task states of a provision or deprovision still running.
var inFlightStates = []string{bosh.TaskQueued, bosh.TaskProcessing, bosh.TaskCancelling}

// indexChange is the index change of a matched instance: create the entry
// when it is missing (from the broker fields of its newest backup when
// there is one, else of its manifest), set the fields the reconciler owns,
// and un-orphan it. Every other field is kept.
func (r *run) indexChange(w *desired) *pending {
	p := &pending{id: w.match.InstanceID, eff: new(effect), w: w}
	now := r.stamp()
	p.change = func(cur *vault.Record) (*vault.Record, error) {
		*p.eff = 0
		next := cur
		if next == nil {
			next = r.newRecord(w)
			*p.eff |= effectCreated
		}
		if ownedFieldsDiffer(next, w) || next.Fingerprint != w.fingerprint {
			setOwnedFields(next, w)
			if *p.eff&effectCreated == 0 {
				*p.eff |= effectUpdated
			}
		}
		if next.Orphaned {
			next.Orphaned, next.UnorphanedAt = false, now
			*p.eff |= effectUnorphaned
		}
		if *p.eff == 0 {
			return nil, nil
		}
		next.ReconciledAt = now
		return next, nil
	}
	return p
}

// ownedFieldsDiffer says whether rec names another service, plan or deployment than w.
func ownedFieldsDiffer(rec *vault.Record, w *desired) bool {
	return (w.serviceID != "" && rec.ServiceID != w.serviceID) || (w.planID != "" && rec.PlanID != w.planID) ||
		rec.DeploymentName != w.deployment
}

// setOwnedFields sets what the reconciler owns; an id that neither the
// matcher nor the manifest could tell is left as it is.
func setOwnedFields(rec *vault.Record, w *desired) {
	if w.serviceID != "" {
		rec.ServiceID = w.serviceID
	}
	if w.planID != "" {
		rec.PlanID = w.planID
	}
	rec.DeploymentName, rec.Fingerprint = w.deployment, w.fingerprint
}

// orphans flags the index entries whose deployment is gone: not one that
// this run matched, not one whose deployment is listed (even unmatched or
// locked), not while the broker's operation on it is in progress or a
// Director task for its deployment is queued or running, and not within the
// grace period after its creation. Entries already flagged stay as they are.
func (r *run) orphans(ctx context.Context, listed []bosh.Deployment) {
	names := make(map[string]bool, len(listed))
	for _, d := range listed {
		names[d.Name] = true
	}
	var candidates []string
	for id, rec := range r.index {
		if !r.isClaimed(id) && !rec.Orphaned && !names[rec.Deployment(id)] && r.mayOrphan(rec) {
			candidates = append(candidates, id)
		}
	}
	if len(candidates) == 0 {
		return
	}
	busy, err := r.busyDeployments(ctx)
	if err != nil {
		r.fail("", fmt.Errorf("no orphan flagged: %w", err))
		return
	}
	slices.Sort(candidates)
	for _, id := range candidates {
		if name := r.index[id].Deployment(id); busy[name] {
			r.log.Debug("orphan candidate has a task in flight", "instance", id, "deployment", name)
			continue
		}
		r.queueIndex(r.orphanChange(id))
	}
}

// mayOrphan says whether rec may be flagged: no operation in progress, and
// past the grace period.
func (r *run) mayOrphan(rec *vault.Record) bool {
	if operationInProgress(rec) {
		return false
	}
	grace := r.m.cfg.OrphanGracePeriod
	return rec.Created == 0 || r.start.Sub(time.Unix(rec.Created, 0)) >= grace
}

// busyDeployments names the deployments with a provision, update or
// deprovision task queued or running (one Director request).
func (r *run) busyDeployments(ctx context.Context) (map[string]bool, error) {
	busy := map[string]bool{}
	if r.m.opts.Tasks == nil {
		return busy, nil
	}
	var tasks []bosh.Task
	err := retry.Do(ctx, r.retries(ctx), r.backoff(), r.logRetry("tasks", "in flight"), func(ctx context.Context) (err error) {
		tasks, err = r.m.opts.Tasks.Tasks(ctx, bosh.TaskQuery{States: inFlightStates})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the Director's tasks in flight: %w", err)
	}
	for _, t := range tasks {
		busy[t.Deployment] = true
	}
	return busy, nil
}

// orphanChange flags an entry orphaned, checking again on the entry as it
// is when written.
func (r *run) orphanChange(id string) *pending {
	p := &pending{id: id, eff: new(effect)}
	now := r.stamp()
	p.change = func(cur *vault.Record) (*vault.Record, error) {
		*p.eff = 0
		if cur == nil || cur.Orphaned || !r.mayOrphan(cur) {
			return nil, nil
		}
		cur.Orphaned, cur.OrphanedAt = true, now
		*p.eff = effectOrphaned
		return cur, nil
	}
	return p
}
