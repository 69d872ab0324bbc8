package reconciler

import (
	"context"
	"errors"
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// observe fetches what a deployment runs (from the cache when it did not
// change), matches it and compares it with the index record; an instance
// that is not in step goes to the writers.
func (r *run) observe(ctx context.Context, d bosh.Deployment, writes chan<- *desired) {
	w, ok := r.observed(ctx, d)
	if !ok || r.inStep(r.index[w.match.InstanceID], w) {
		r.done.Add(1)
		return
	}
	writes <- w
}

// inStep says whether the index record shows the instance in step, so that
// nothing more is read: it holds the fingerprint of what the reconciler last
// wrote, no orphan flag and the deployment's name. A forced run trusts no
// fingerprint: it reads every instance's records again, so that a metadata
// or manifest document lost or changed in Vault is written again.
func (r *run) inStep(cur *vault.Record, w *desired) bool {
	return !r.opts.Force && cur != nil && cur.Fingerprint == w.fingerprint && !cur.Orphaned &&
		cur.DeploymentName == w.deployment
}

// observed fetches and matches a deployment; false when it is busy (locked
// by a task, not deployed yet, its instance's broker operation in
// progress), unmatched, a duplicate, gone, or could not be fetched (each
// recorded). A name that tells the instance spares a busy one's fetch.
func (r *run) observed(ctx context.Context, d bosh.Deployment) (*desired, bool) {
	if d.Locked {
		return nil, r.busy(d.Name, "deployment locked by a task, skipped")
	}
	early, byName := r.m.matcher.matchByName(d.Name)
	if byName && r.instanceBusy(d.Name, early.InstanceID) {
		return nil, false
	}
	var pf *prefetch
	if byName {
		pf = r.prefetch(ctx, early.InstanceID)
	}
	handed := false
	defer func() {
		if !handed { // skipped: nobody will read what it fetched
			pf.stop()
		}
	}()
	sc, ok := r.fetched(ctx, d, byName)
	if !ok {
		return nil, false
	}
	if sc.manifest == "" {
		return nil, r.busy(d.Name, "deployment has no manifest yet, skipped")
	}
	mt, ok := r.matchDeployment(d, sc, byName)
	if !ok || (!byName && r.instanceBusy(d.Name, mt.InstanceID)) {
		return nil, false
	}
	if !byName { // the VMs were not fetched with the manifest
		if sc, ok = r.fetched(ctx, d, true); !ok {
			return nil, false
		}
	}
	r.count(func(s *Summary) { s.Matched++ })
	w := newDesired(d, sc, mt)
	w.prefetched, handed = pf, true
	return w, true
}

// busy logs and counts a deployment skipped because something is changing
// it; it returns false, for observed.
func (r *run) busy(name, msg string) bool {
	r.log.Debug(msg, "deployment", name)
	r.count(func(s *Summary) { s.Busy++ })
	return false
}

// instanceBusy says whether the broker's operation on the instance is in
// progress (and counts it matched and busy): its records are the broker's to
// change until it ends, and the Director may not have locked the deployment yet.
func (r *run) instanceBusy(name, id string) bool {
	if !operationInProgress(r.index[id]) {
		return false
	}
	r.log.Debug("broker operation in progress on the instance, skipped", "deployment", name, "instance", id)
	r.count(func(s *Summary) { s.Matched++; s.Busy++ })
	return true
}

// operationInProgress says whether the broker's operation on rec is in progress.
func operationInProgress(rec *vault.Record) bool {
	return rec.OperationInProgress()
}

// fetched asks the scanner (with retries) and records a failure; a
// deployment deleted since the listing is skipped without an error (the
// next run sees it gone).
func (r *run) fetched(ctx context.Context, d bosh.Deployment, withVMs bool) (*scanned, bool) {
	sc, err := r.fetch(ctx, d, withVMs)
	switch {
	case err == nil:
		return sc, true
	case errors.Is(err, bosh.ErrDeploymentNotFound):
		r.log.Info("deployment deleted since the listing, skipped", "deployment", d.Name)
	default:
		r.failUnlessStopped(ctx, "deployment "+d.Name, fmt.Errorf("deployment %s: %w", d.Name, err))
	}
	return nil, false
}

// matchDeployment runs the matcher (the manifest is parsed only when the
// name alone does not match) and claims the instance for the deployment.
func (r *run) matchDeployment(d bosh.Deployment, sc *scanned, byName bool) (Match, bool) {
	var info *manifestInfo
	if !byName {
		var err error
		if info, err = sc.info(); err != nil {
			r.fail("deployment "+d.Name, fmt.Errorf("deployment %s: %w", d.Name, err))
			return Match{}, false
		}
	}
	mt, ok, reason := r.m.matcher.match(d, info)
	if !ok {
		r.log.Debug("deployment unmatched", "deployment", d.Name, "reason", reason)
		r.unmatched(d.Name, reason)
		return Match{}, false
	}
	r.log.Debug("deployment matched", "deployment", d.Name, "instance", mt.InstanceID,
		"strategy", mt.Strategy, "confidence", mt.Confidence, "rule", mt.Rule)
	if other, ok := r.claim(mt.InstanceID, d.Name); !ok {
		r.unmatched(d.Name, fmt.Sprintf("instance %s is already matched by deployment %s", mt.InstanceID, other))
		return Match{}, false
	}
	return mt, true
}

// fetch asks the scanner, with retries.
func (r *run) fetch(ctx context.Context, d bosh.Deployment, withVMs bool) (*scanned, error) {
	var sc *scanned
	err := retry.Do(ctx, r.retries(ctx), r.backoff(), r.logRetry("deployment", d.Name), func(ctx context.Context) (err error) {
		sc, err = r.m.scanner.fetch(ctx, d, withVMs)
		return err
	})
	return sc, err
}
