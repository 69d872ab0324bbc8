package reconciler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// retries is Config.RetryAttempts, or none once ctx has ended.
func (r *run) retries(ctx context.Context) int {
	if ctx.Err() != nil {
		return 0
	}
	return r.m.cfg.RetryAttempts
}

// backoff starts at Config.RetryDelay.
func (r *run) backoff() retry.Backoff {
	return retry.Backoff{Base: r.m.cfg.RetryDelay, Limit: max(maxBackoff, r.m.cfg.RetryDelay)}
}

// logRetry logs each retry of a step.
func (r *run) logRetry(key string, value any) func(int, error, time.Duration) {
	return func(attempt int, err error, wait time.Duration) {
		r.log.Warn("reconciler step failed, retrying", key, value, "attempt", attempt, "retry_in", wait, "error", err)
	}
}

// stamp is the run's start time in RFC 3339 (UTC).
func (r *run) stamp() string { return r.start.UTC().Format(time.RFC3339) }

// count changes the summary under the lock.
func (r *run) count(f func(*Summary)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.sum)
}

// fail records an error; key (may be empty) names the instance or
// deployment it concerns, each counted once in Summary.Failed.
func (r *run) fail(key string, err error) {
	r.log.Error("reconciler error", "error", err)
	r.mu.Lock()
	defer r.mu.Unlock()
	if key != "" && !r.failedID[key] {
		r.failedID[key] = true
		r.sum.Failed++
	}
	r.sum.ErrorCount++
	if len(r.sum.Errors) < maxErrorLines {
		r.sum.Errors = append(r.sum.Errors, err.Error())
	}
}

// failUnlessStopped records an error, unless it comes from the run being
// cancelled (the run's own error says so once).
func (r *run) failUnlessStopped(ctx context.Context, key string, err error) {
	if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return
	}
	r.fail(key, err)
}

// unmatched records a deployment no strategy could tie to an instance.
func (r *run) unmatched(name, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.unmatch = append(r.unmatch, Unmatched{Deployment: name, Reason: reason})
	r.sum.Unmatched++
}

// preclaim ties the instances that deployments named {planID}-{instanceID}
// stand for to those deployments before anything is fetched, so that another
// deployment claiming one of them (a copy of its manifest, say) never wins,
// however the fetches are timed; among such names the first listed wins.
func (r *run) preclaim(deps []bosh.Deployment) {
	for _, d := range deps {
		if mt, ok := r.m.matcher.matchByName(d.Name); ok {
			r.claim(mt.InstanceID, d.Name)
		}
	}
}

// claim ties an instance id to a deployment; false (and the deployment that
// holds it) when another deployment was tied to it first.
func (r *run) claim(id, name string) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if other, ok := r.claimed[id]; ok && other != name {
		return other, false
	}
	r.claimed[id] = name
	return "", true
}

func (r *run) isClaimed(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.claimed[id]
	return ok
}

// noteOrphan remembers the orphan flags this run changed.
func (r *run) noteOrphan(id string, e effect) {
	if e&(effectOrphaned|effectUnorphaned) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.flagged[id] = e
}

func (r *run) phaseNow() string { return r.phase.Load().(string) }

func (r *run) progress() Progress {
	return Progress{Done: int(r.done.Load()), Total: int(r.total.Load())}
}

// finish completes the summary.
func (r *run) finish(err error, fetched int) Summary {
	if err != nil {
		r.fail("", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.sum
	s.Errors = slices.Clone(s.Errors)
	s.aborted = err
	s.Duration = r.m.opts.Now().Sub(r.start)
	s.DurationSeconds = s.Duration.Seconds()
	s.ManifestsFetched = fetched
	s.OrphansTotal = len(r.orphanList())
	s.Converged = s.Writes == 0 && s.ErrorCount == 0
	if r.plan != nil {
		s.Plan = r.plan.result()
		s.Converged = s.Plan.empty() && s.ErrorCount == 0
	}
	r.log.Info("reconciler run finished", "duration", s.Duration, "deployments", s.DeploymentsSeen,
		"matched", s.Matched, "unmatched", s.Unmatched, "synced", s.InstancesSynced, "orphaned", s.Orphaned,
		"writes", s.Writes, "errors", s.ErrorCount, "converged", s.Converged)
	return s
}

// orphanList is the orphaned entries after the run (as read, with this
// run's flags applied), sorted by instance id. The caller holds r.mu.
func (r *run) orphanList() []Orphan {
	out := []Orphan{}
	for id, rec := range r.index {
		e := r.flagged[id]
		switch {
		case e&effectOrphaned != 0:
			out = append(out, Orphan{InstanceID: id, Deployment: rec.Deployment(id), OrphanedAt: r.start.UTC().Truncate(time.Second)})
		case rec.Orphaned && e&effectUnorphaned == 0:
			at, _ := time.Parse(time.RFC3339, rec.OrphanedAt)
			out = append(out, Orphan{InstanceID: id, Deployment: rec.Deployment(id), OrphanedAt: at})
		}
	}
	slices.SortFunc(out, func(a, b Orphan) int { return cmp.Compare(a.InstanceID, b.InstanceID) })
	return out
}

// setCurrent publishes the run in progress for Status.
func (m *Manager) setCurrent(r *run) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.current = r
	m.metrics.running.Set(boolGauge(r != nil))
}

// finished publishes a run's outcome: metrics and status (not for a dry run).
func (m *Manager) finished(r *run, s Summary) {
	if s.DryRun {
		return
	}
	m.metrics.observe(s, m.opts.Now())
	r.mu.Lock()
	orphans, unmatched := r.orphanList(), slices.Clone(r.unmatch)
	r.mu.Unlock()
	slices.SortFunc(unmatched, func(a, b Unmatched) int { return cmp.Compare(a.Deployment, b.Deployment) })
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = &s
	if s.aborted == nil {
		m.orphans, m.unmatched = orphans, unmatched
	}
	if s.aborted != nil {
		m.log.Warn("reconciler run aborted", "run", s.RunID, "error", fmt.Sprint(s.aborted))
	}
}
