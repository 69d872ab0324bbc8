package reconciler

import (
	"context"
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// observe fetches what a deployment runs (from the cache when it did not
// change), matches it and compares it with the index record; an instance
// that is not in step goes to the writers.
func (r *run) observe(ctx context.Context, d bosh.Deployment, writes chan<- *desired) {
	if d.Locked {
		r.log.Debug("deployment locked by a task, skipped", "deployment", d.Name)
		r.count(func(s *Summary) { s.Busy++ })
		r.done.Add(1)
		return
	}
	w, ok := r.observed(ctx, d)
	if !ok {
		r.done.Add(1)
		return
	}
	cur := r.index[w.match.InstanceID]
	if brokerBusy(cur) {
		r.log.Debug("broker operation in progress on the instance, skipped", "deployment", d.Name, "instance", w.match.InstanceID)
		r.count(func(s *Summary) { s.Busy++ })
	}
	if brokerBusy(cur) || r.inStep(cur, w) {
		r.done.Add(1)
		return
	}
	writes <- w
}

// brokerBusy says whether the broker's operation on an instance is in
// progress: its records are the broker's to change until it ends (the
// Director may not have locked the deployment yet).
func brokerBusy(rec *vault.Record) bool {
	return rec != nil && rec.LastOperation != nil && rec.LastOperation.State == opInProgress
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

// observed fetches and matches a deployment; false when it is busy,
// unmatched, a duplicate, or could not be fetched (each recorded).
func (r *run) observed(ctx context.Context, d bosh.Deployment) (*desired, bool) {
	early, byName := r.m.matcher.matchByName(d.Name)
	var pf *prefetch
	if byName {
		pf = r.prefetch(ctx, early.InstanceID)
	}
	sc, err := r.fetch(ctx, d, byName)
	if err != nil {
		r.failUnlessStopped(ctx, "deployment "+d.Name, fmt.Errorf("deployment %s: %w", d.Name, err))
		return nil, false
	}
	if sc.manifest == "" {
		r.log.Debug("deployment has no manifest yet, skipped", "deployment", d.Name)
		r.count(func(s *Summary) { s.Busy++ })
		return nil, false
	}
	mt, ok := r.matchDeployment(d, sc, byName)
	if !ok {
		return nil, false
	}
	if !byName { // the VMs were not fetched with the manifest
		if sc, err = r.fetch(ctx, d, true); err != nil {
			r.failUnlessStopped(ctx, mt.InstanceID, fmt.Errorf("deployment %s: %w", d.Name, err))
			return nil, false
		}
	}
	r.count(func(s *Summary) { s.Matched++ })
	w := newDesired(d, sc, mt)
	w.prefetched = pf
	return w, true
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
	err := retry(ctx, r.retries(ctx), r.backoff(), r.logRetry("deployment", d.Name), func(ctx context.Context) (err error) {
		sc, err = r.m.scanner.fetch(ctx, d, withVMs)
		return err
	})
	return sc, err
}
