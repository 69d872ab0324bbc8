package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// observer is the stage between the scanner and the updater: it fetches a
// deployment (through the scanner's cache), matches it, claims its instance
// and compares it with the index record; an instance that is not in step
// goes to the updater.
type observer struct {
	director Director // the run's, behind its breaker
	rounds   *rounds  // later rounds for failed fetches
	quar     *quarantine
	// minConfidence is Config.MinConfidence: a match below it is reported, not written.
	minConfidence float64
	watch         *watch            // the event feed since the last run
	trust         trust             // which cached copies the run may use
	byDep         map[string]string // deployment -> instance id, as the index names them
	trusted       *atomic.Int64     // deployments the feed vouched for without a fetch
	scanner       *scanner
	matcher       *matcher
	claims        *claims
	index         map[string]*vault.Record // as read at the start of the run
	force         bool                     // trust no fingerprint
	updater       *updater                 // starts the Vault read of an instance the index lacks
	state         *runState
	retry         retrier
	log           *slog.Logger
}

// observe fetches what a deployment runs (from the cache when it did not
// change), matches it and compares it with the index record; an instance
// that is not in step goes to the writers. A deployment whose claim waits
// for the end of the observation is held (resume goes on with it).
func (o *observer) observe(ctx context.Context, d bosh.Deployment, writes chan<- *desired) {
	if w, held := o.observed(ctx, d); !held {
		o.handOn(w, writes)
	}
}

// resume goes on with a held deployment that won its instance.
func (o *observer) resume(ctx context.Context, h *heldClaim, writes chan<- *desired) {
	w, _ := o.completed(ctx, h.d, h.sc, h.mt, nil, false)
	o.handOn(w, writes)
}

// handOn sends w (nil: skipped) to the writers unless the index record
// shows it in step.
func (o *observer) handOn(w *desired, writes chan<- *desired) {
	if w == nil || o.inStep(o.index[w.match.InstanceID], w) {
		o.state.done.Add(1)
		return
	}
	writes <- w
}

// inStep says whether the index record shows the instance in step, so that
// nothing more is read: it holds the fingerprint of what the reconciler last
// wrote, no orphan flag and the deployment's name. A forced run trusts no
// fingerprint: it reads every instance's records again, so that a metadata
// or manifest document lost or changed in Vault is written again.
func (o *observer) inStep(cur *vault.Record, w *desired) bool {
	return !o.force && cur != nil && cur.Fingerprint == w.fingerprint && !cur.Orphaned &&
		cur.DeploymentName == w.deployment && cur.Director == w.director
}

// observed fetches and matches a deployment; nil when it is busy (locked
// by a task, not deployed yet, its instance's broker operation in
// progress), unmatched, a duplicate, gone, or could not be fetched (each
// recorded), or held (true) until the claims are settled. A name that
// tells the instance spares a busy one's fetch.
func (o *observer) observed(ctx context.Context, d bosh.Deployment) (w *desired, held bool) {
	if d.Locked {
		return nil, o.busy(d.Name, "deployment locked by a task, skipped")
	}
	early, byName := o.matcher.matchByName(d.Name)
	if o.quarantined(deploymentKey(d.Name), d.Name, early.InstanceID) ||
		(byName && o.quarantined(instanceKey(early.InstanceID), d.Name, early.InstanceID)) {
		return nil, false
	}
	if byName && o.instanceBusy(d.Name, early.InstanceID) {
		return nil, false
	}
	if o.vouched(d, early, byName) {
		return nil, false
	}
	var pf *prefetch
	if byName {
		pf = o.updater.prefetch(ctx, early.InstanceID)
	}
	handed := false
	defer func() {
		if !handed { // skipped: nobody will read what it fetched
			pf.stop()
		}
	}()
	sc, ok := o.fetchedOrLater(ctx, d, byName)
	if !ok {
		return nil, false
	}
	if sc.manifest == "" {
		return nil, o.busy(d.Name, "deployment has no manifest yet, skipped")
	}
	mt, ok, held := o.matchDeployment(d, sc, byName)
	if !ok {
		return nil, held
	}
	w, handed = o.completed(ctx, d, sc, mt, pf, byName)
	return w, false
}

// completed finishes the observation of a deployment that won its
// instance: the VMs when they were not fetched with the manifest, and the
// instance's desired records; false when the instance is busy or the VMs
// could not be fetched.
func (o *observer) completed(ctx context.Context, d bosh.Deployment, sc *scanned, mt Match, pf *prefetch, byName bool) (*desired, bool) {
	if !byName && (o.quarantined(instanceKey(mt.InstanceID), d.Name, mt.InstanceID) || o.instanceBusy(d.Name, mt.InstanceID)) {
		return nil, false
	}
	if !byName { // the VMs were not fetched with the manifest
		var ok bool
		if sc, ok = o.fetched(ctx, d, true); !ok {
			return nil, false
		}
	}
	o.state.count(func(s *Summary) { s.Matched++; s.MatchedBy[mt.Strategy]++ })
	return newDesired(d, sc, mt, pf), true
}

// vouched says whether the event feed vouches for a deployment that has no
// cached copy (a restarted daemon): no event named it since the last run,
// and the index record that names it shows the reconciler wrote it (its
// fingerprint), not orphaned. It is counted matched and in step; nothing is
// fetched. A deployment with a cached copy goes the usual way (the copy is
// used).
func (o *observer) vouched(d bosh.Deployment, early Match, byName bool) bool {
	if !o.watch.trusts(d.Name) || o.scanner.has(d) {
		return false
	}
	id := early.InstanceID
	if !byName {
		id = o.byDep[d.Name]
		if id == "" || o.quarantined(instanceKey(id), d.Name, id) || o.instanceBusy(d.Name, id) {
			return false
		}
	}
	rec := o.index[id]
	if rec == nil || rec.Orphaned || rec.Fingerprint == "" || rec.Deployment(id) != d.Name || rec.Director != d.Director {
		return false
	}
	o.claims.seen(d.Name)
	o.trusted.Add(1)
	o.state.count(func(s *Summary) { s.Matched++; s.MatchedBy[Strategy(rec.MatchStrategy)]++ })
	return true
}

// quarantined says whether the run leaves the item (key) alone because it
// is quarantined, and logs it.
func (o *observer) quarantined(key, name, id string) bool {
	if !o.quar.skip(key, id) {
		return false
	}
	o.log.Debug("quarantined, skipped until its backoff expires", "deployment", name, "item", key)
	return true
}

// busy logs and counts a deployment skipped because something is changing
// it; it returns false, for observed.
func (o *observer) busy(name, msg string) bool {
	o.log.Debug(msg, "deployment", name)
	o.state.count(func(s *Summary) { s.Busy++ })
	return false
}

// instanceBusy says whether the broker's operation on the instance is in
// progress (and counts it matched and busy): its records are the broker's to
// change until it ends, and the Director may not have locked the deployment yet.
func (o *observer) instanceBusy(name, id string) bool {
	if !operationInProgress(o.index[id]) {
		return false
	}
	o.log.Debug("broker operation in progress on the instance, skipped", "deployment", name, "instance", id)
	o.state.count(func(s *Summary) { s.Matched++; s.Busy++ })
	return true
}

// operationInProgress says whether the broker's operation on rec is in progress.
func operationInProgress(rec *vault.Record) bool {
	return rec.OperationInProgress()
}

// fetchedOrLater asks the scanner once; a failure that may pass hands the
// deployment to a later round of the run (nothing is recorded until its
// attempts are spent).
func (o *observer) fetchedOrLater(ctx context.Context, d bosh.Deployment, withVMs bool) (*scanned, bool) {
	sc, err := o.scanner.fetch(ctx, o.director, d, withVMs, o.trust)
	if err != nil && o.rounds.later(ctx, d, err) {
		o.log.Debug("deployment fetch failed, tried again in a later round", "deployment", d.Name, "error", err)
		return nil, false
	}
	return o.outcome(ctx, d, sc, err)
}

// fetched asks the scanner (with retries in place) and records a failure; a
// deployment deleted since the listing is skipped without an error (the
// next run sees it gone).
func (o *observer) fetched(ctx context.Context, d bosh.Deployment, withVMs bool) (*scanned, bool) {
	sc, err := o.fetch(ctx, d, withVMs)
	return o.outcome(ctx, d, sc, err)
}

// outcome records a failed fetch; true with what was fetched. A fetch that
// failed once the run was stopped is not an error of its own (the run's
// error says why it stopped).
func (o *observer) outcome(ctx context.Context, d bosh.Deployment, sc *scanned, err error) (*scanned, bool) {
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, false
	case err == nil:
		o.state.markFetched(d.Name)
		return sc, true
	case errors.Is(err, bosh.ErrDeploymentNotFound):
		o.log.Info("deployment deleted since the listing, skipped", "deployment", d.Name)
	default:
		o.state.failUnlessStopped(ctx, deploymentKey(d.Name), fmt.Errorf("deployment %s: %w", d.Name, err))
	}
	return nil, false
}

// matchDeployment runs the matcher (the manifest is parsed only when the
// name alone does not match) and claims the instance for the deployment;
// held when the claim waits for the claims to be settled.
func (o *observer) matchDeployment(d bosh.Deployment, sc *scanned, byName bool) (mt Match, ok, held bool) {
	o.claims.seen(d.Name)
	var info *manifestInfo
	if !byName {
		var err error
		if info, err = sc.info(); err != nil {
			o.state.fail(deploymentKey(d.Name), fmt.Errorf("deployment %s: %w", d.Name, err))
			return Match{}, false, false
		}
	}
	mt, ok, reason := o.matcher.match(d, info)
	if !ok {
		o.log.Debug("deployment unmatched", "deployment", d.Name, "reason", reason)
		o.state.unmatched(d.Name, reason)
		return Match{}, false, false
	}
	o.log.Debug("deployment matched", "deployment", d.Name, "instance", mt.InstanceID,
		"strategy", mt.Strategy, "confidence", mt.Confidence, "rule", mt.Rule)
	if mt.Confidence < o.minConfidence {
		o.log.Info("match below reconciler.min_confidence, reported and not written", "deployment", d.Name,
			"instance", mt.InstanceID, "strategy", mt.Strategy, "confidence", mt.Confidence)
		o.state.lowConfidence(d.Name, mt, o.minConfidence)
		return Match{}, false, false
	}
	other, ok, held := o.claims.claim(mt.InstanceID, d.Name, &heldClaim{d: d, sc: sc, mt: mt})
	if !ok && !held {
		o.state.conflict(Conflict{InstanceID: mt.InstanceID, Winner: other, Loser: d.Name}, false)
	}
	return mt, ok, held
}

// fetch asks the scanner, with retries.
func (o *observer) fetch(ctx context.Context, d bosh.Deployment, withVMs bool) (*scanned, error) {
	var sc *scanned
	err := o.retry.do(ctx, "deployment", d.Name, func(ctx context.Context) (err error) {
		sc, err = o.scanner.fetch(ctx, o.director, d, withVMs, o.trust)
		return err
	})
	return sc, err
}
