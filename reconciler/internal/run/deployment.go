package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// job is one deployment to reconcile: fresh from the listing, or a held
// claimant coming back once it won its instance (with what was found of it).
type job struct {
	d    bosh.Deployment
	held *held
}

// held is what was found of a claimant held until the claims are settled.
type held struct {
	d       bosh.Deployment
	fetched *fleet.Fetched
	match   report.Match
}

// deployments reconciles deployments, one at a time per worker: the stage
// that used to be the observer and the updater.
type deployments struct {
	fleet   *fleet.Fleet
	cache   *fleet.Cache
	view    *fleet.View
	trust   fleet.Trust
	matcher *match.Matcher
	claims  *match.Claims[*held]
	quar    *memory.Quarantine
	rounds  *memory.Rounds
	reader  *records.Reader
	writer  records.Writer
	ledger  *memory.Ledger
	policy  memory.Policy
	index   map[string]*vault.Record // as read at the start of the run
	byDep   map[string]string        // deployment -> instance id, as the index names them
	slots   slots
	least   float64 // Config.MinConfidence: a match below it is reported, not written
	// conflict records a conflict (in the history too, when it appears).
	conflict func(report.Conflict, reason)
	force    bool // trust no fingerprint
	dryRun   bool
	start    time.Time
	log      *slog.Logger
}

// reconcile brings the records of one deployment's instance in step, top to
// bottom. It returns false when the deployment is handed on: held until
// every deployment is observed (it comes back here with what was found),
// or to a later round of the run (its fetch failed and may pass).
func (w *deployments) reconcile(ctx context.Context, j job) (finished bool) {
	d := j.d
	early, byName := w.matcher.ByName(d.Name) // the name may tell the instance before anything is fetched
	f, mt := (*fleet.Fetched)(nil), report.Match{}
	var read *records.Prefetch
	defer func() { read.Stop() }()
	if j.held == nil {
		// 1. Skip rules: locked, quarantined, its broker operation in
		// progress, vouched for by the event feed.
		if w.skipped(d, early, byName) {
			return true
		}
		// 2. Fetch: the manifest (and the VMs when the name tells the
		// instance), with the instance's Vault documents read alongside.
		if byName {
			read = w.reader.Start(ctx, early.InstanceID)
		}
		var ok, later bool
		if f, ok, later = w.fetch(ctx, d, byName); !ok {
			return !later
		}
		if !f.HasManifest() {
			return w.busy(d.Name, "deployment has no manifest yet, skipped")
		}
		// 3. Match, and 4. claim the instance (or wait for the claims to be settled).
		var v match.Verdict
		if mt, v = w.match(d, f, byName); v != match.Won {
			return v != match.Waiting
		}
	} else {
		f, mt = j.held.fetched, j.held.match
	}
	if !byName { // known only now: the instance's own skip rules, and its VMs
		if w.quarantined(report.InstanceKey(mt.InstanceID), d.Name, mt.InstanceID) || w.instanceBusy(d.Name, mt.InstanceID) {
			return true
		}
		var ok bool
		if f, ok = w.fetchVMs(ctx, d); !ok {
			return true
		}
	}
	w.ledger.Count(func(s *report.Summary) { s.Matched++; s.MatchedBy[mt.Strategy]++ })
	// 5. The desired records, and 6. in step? The index record says so by
	// its fingerprint: nothing more is read.
	want := records.New(d, f, mt)
	cur := w.index[mt.InstanceID]
	if records.InStep(cur, want, w.force) || ctx.Err() != nil {
		return true
	}
	// 7. Write what differs, and 8. its index change.
	w.ledger.Safely(report.InstanceKey(mt.InstanceID), func() { w.write(ctx, want, cur, &read) })
	return true
}

// write brings one instance's documents in step (reads first, writes only
// what differs, backs up first when something existing changes), with
// retries, then queues its index change.
func (w *deployments) write(ctx context.Context, want *records.Desired, cur *vault.Record, read **records.Prefetch) {
	release := w.slots.vault.hold()
	defer release()
	id := want.Match.InstanceID
	t, err := want.Load(w.matcher)
	u := &records.Update{Target: t}
	if err == nil && records.NeedsRead(cur, want, w.force) { // else only the index record differs
		err = w.policy.Do(ctx, "instance", id, func(ctx context.Context) error {
			have, err := w.reader.Current(ctx, id, read)
			if err != nil {
				return err
			}
			u.Actions, u.Have = records.Diff(t, have, cur, records.Stamp(w.start)), have
			if u.Restored, err = w.reader.Restored(ctx, id, have); err != nil {
				return err
			}
			return w.writer.Write(ctx, u)
		})
	}
	if err != nil {
		w.ledger.FailUnlessStopped(ctx, report.InstanceKey(id), fmt.Errorf("instance %s (deployment %s): %w", id, want.Deployment, err))
		return
	}
	w.writer.Queue(records.IndexChange(u, w.start))
}

// skipped says whether the run leaves a deployment alone before fetching
// it: a task holds its lock, it or its instance (when the name tells it) is
// quarantined, the broker's operation on its instance is in progress, or
// the event feed and its index record vouch for it (counted matched, in
// step: nothing is fetched).
func (w *deployments) skipped(d bosh.Deployment, early report.Match, byName bool) bool {
	switch {
	case d.Locked:
		return w.busy(d.Name, "deployment locked by a task, skipped")
	case w.quarantined(report.DeploymentKey(d.Name), d.Name, early.InstanceID),
		byName && w.quarantined(report.InstanceKey(early.InstanceID), d.Name, early.InstanceID),
		byName && w.instanceBusy(d.Name, early.InstanceID):
		return true
	}
	return w.vouched(d, early, byName)
}

// vouched says whether the event feed vouches for a deployment that has no
// cached copy (a restarted daemon): no event named it since the last run,
// and the index record that names it shows the reconciler wrote it. A
// deployment with a cached copy goes the usual way (the copy is used).
func (w *deployments) vouched(d bosh.Deployment, early report.Match, byName bool) bool {
	if !w.view.Trusts(d.Name) || w.cache.Has(d) {
		return false
	}
	id := early.InstanceID
	if !byName {
		// Its instance's own skip rules come once it is matched.
		if id = w.byDep[d.Name]; id == "" || w.quar.Skip(report.InstanceKey(id), id) || w.index[id].OperationInProgress() {
			return false
		}
	}
	rec := w.index[id]
	if !records.Vouches(rec, id, d.Name, d.Director) {
		return false
	}
	w.claims.Seen(d.Name)
	w.fleet.Feeds().Vouched(d.Name)
	w.ledger.Count(func(s *report.Summary) { s.Matched++; s.MatchedBy[report.Strategy(rec.MatchStrategy)]++ })
	return true
}

// quarantined says whether the run leaves the item (key) alone because it
// is quarantined, and logs it.
func (w *deployments) quarantined(key, name, id string) bool {
	if !w.quar.Skip(key, id) {
		return false
	}
	w.log.Debug("quarantined, skipped until its backoff expires", "deployment", name, "item", key)
	return true
}

// busy logs and counts a deployment skipped because something is changing
// it; true (it is dealt with).
func (w *deployments) busy(name, msg string) bool {
	w.log.Debug(msg, "deployment", name)
	w.ledger.Count(func(s *report.Summary) { s.Busy++ })
	return true
}

// instanceBusy says whether the broker's operation on the instance is in
// progress (and counts it matched and busy): its records are the broker's to
// change until it ends, and the Director may not have locked the deployment yet.
func (w *deployments) instanceBusy(name, id string) bool {
	if !w.index[id].OperationInProgress() {
		return false
	}
	w.log.Debug("broker operation in progress on the instance, skipped", "deployment", name, "instance", id)
	w.ledger.Count(func(s *report.Summary) { s.Matched++; s.Busy++ })
	return true
}

// fetch asks the cache (the Director when it has no copy the run trusts)
// once; a failure that may pass hands the deployment to a later round of
// the run (later: nothing is recorded until its attempts are spent).
func (w *deployments) fetch(ctx context.Context, d bosh.Deployment, withVMs bool) (f *fleet.Fetched, ok, later bool) {
	release := sync.OnceFunc(w.slots.director.hold()) // given back when the Director answered
	defer release()                                   // or when the fetch panicked
	f, err := w.cache.FetchThen(ctx, w.fleet, d, withVMs, w.trust, release)
	if err != nil && w.rounds.Later(ctx, d, err) {
		w.log.Debug("deployment fetch failed, tried again in a later round", "deployment", d.Name, "error", err)
		return nil, false, true
	}
	f, ok = w.outcome(ctx, d, f, err)
	return f, ok, false
}

// fetchVMs completes the fetch of a deployment matched otherwise than by
// its name with its VMs (retried in place: it was fetched once already).
func (w *deployments) fetchVMs(ctx context.Context, d bosh.Deployment) (*fleet.Fetched, bool) {
	release := w.slots.director.hold()
	defer release()
	var f *fleet.Fetched
	err := w.policy.Do(ctx, "deployment", d.Name, func(ctx context.Context) (err error) {
		f, err = w.cache.Fetch(ctx, w.fleet, d, true, w.trust)
		return err
	})
	return w.outcome(ctx, d, f, err)
}

// outcome records a failed fetch; true with what was fetched. A fetch that
// failed once the run was stopped is not an error of its own (the run's
// error says why it stopped), nor is a deployment deleted since the listing
// (the next run sees it gone).
func (w *deployments) outcome(ctx context.Context, d bosh.Deployment, f *fleet.Fetched, err error) (*fleet.Fetched, bool) {
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, false
	case err == nil:
		w.ledger.MarkFetched(d.Name)
		return f, true
	case errors.Is(err, bosh.ErrDeploymentNotFound):
		w.log.Info("deployment deleted since the listing, skipped", "deployment", d.Name)
	default:
		w.ledger.FailUnlessStopped(ctx, report.DeploymentKey(d.Name), fmt.Errorf("deployment %s: %w", d.Name, err))
	}
	return nil, false
}

// match runs the matcher (the manifest is parsed only when the name alone
// does not match) and claims the instance for the deployment: Won, Taken (a
// conflict, recorded; or not matched at all, recorded) or Waiting (held,
// with what was found, until the claims are settled).
func (w *deployments) match(d bosh.Deployment, f *fleet.Fetched, byName bool) (report.Match, match.Verdict) {
	w.claims.Seen(d.Name)
	var info *match.Manifest
	if !byName {
		var err error
		if info, err = f.Info(); errors.Is(err, match.ErrManifestBounds) {
			// Director content past the bounds: reported, not the run's error.
			w.ledger.Unmatched(d.Name, "manifest not read: "+err.Error(), false)
			return report.Match{}, match.Taken
		} else if err != nil {
			w.ledger.Fail(report.DeploymentKey(d.Name), fmt.Errorf("deployment %s: %w", d.Name, err))
			return report.Match{}, match.Taken
		}
	}
	mt, ok, reason := w.matcher.Match(d, info)
	if !ok {
		w.log.Debug("deployment unmatched", "deployment", d.Name, "reason", reason)
		w.ledger.Unmatched(d.Name, reason, match.Foreign(w.matcher, d, info))
		return report.Match{}, match.Taken
	}
	w.log.Debug("deployment matched", "deployment", d.Name, "instance", mt.InstanceID,
		"strategy", mt.Strategy, "confidence", mt.Confidence, "rule", mt.Rule)
	if mt.Confidence < w.least {
		w.log.Info("match below reconciler.min_confidence, reported and not written", "deployment", d.Name,
			"instance", mt.InstanceID, "strategy", mt.Strategy, "confidence", mt.Confidence)
		w.ledger.LowConfidence(d.Name, mt, w.least)
		return report.Match{}, match.Taken
	}
	v, other := w.claims.Claim(mt.InstanceID, d.Name, &held{d: d, fetched: f, match: mt})
	switch c := (report.Conflict{InstanceID: mt.InstanceID, Winner: other, Loser: d.Name}); v {
	case match.Taken:
		w.ledger.Conflict(c, taken(c))
	case match.Owned:
		w.conflict(c, owned)
		return mt, match.Taken
	}
	return mt, v
}
