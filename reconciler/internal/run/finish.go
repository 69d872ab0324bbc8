package run

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// settleQuarantine quarantines what failed in this (complete) run and
// releases what is in step again, and writes the quarantine when it
// changed (not in a dry run). A run stopped part-way quarantines nothing:
// its failures may be the outage's. An item that may live on a Director
// the run could not list (or lost part-way) is neither quarantined nor
// released: its failures may be that Director's.
func (r *run) settleQuarantine(ctx context.Context) {
	if !r.quar.Loaded() {
		return
	}
	// An item (key "deployment NAME" or "instance ID") that may belong to
	// a Director this run could not list was not looked at.
	mayBeOut := func(key string) bool {
		kind, name := splitKey(key)
		if kind == "instance" {
			return r.fleet.MayHold("", r.seen.index[name], true)
		}
		return r.fleet.MayHold(name, nil, false)
	}
	considered := func(key string) bool { return r.owners.covers(key) && !mayBeOut(key) }
	failed := r.ledger.Failures()
	maps.DeleteFunc(failed, func(key, _ string) bool { return mayBeOut(key) })
	// A storm of the Directors' transient faults is theirs, not the
	// deployments': a healthy deployment that met one must not wait the
	// quarantine's backoff (the next run tries it again).
	excused := r.ledger.TransientFailures()
	if memory.Storm(len(excused), len(r.seen.listed)) {
		r.log.Warn("the Directors were failing: transient faults hit many deployments; they are not quarantined and the next run tries them again",
			"failed", len(excused), "listed", len(r.seen.listed))
		r.ledger.Count(func(s *report.Summary) { s.Excused = len(excused) })
	} else {
		excused = nil
	}
	ch := r.quar.Settle(r.p.Now(), failed, excused, r.seen.listed, r.owners.instanceOf, considered)
	r.ledger.Count(func(s *report.Summary) {
		s.Quarantined, s.NewlyQuarantined, s.Released = r.quar.Skipped(), ch.Added, ch.Released
		s.QuarantinedTotal = len(r.quar.List())
	})
	for _, q := range ch.Added {
		transition := "yes" // notified when it enters the quarantine, not at each failed retry
		if q.Failures > 1 {
			transition = "no"
		}
		r.hist.Add(q.InstanceID, vault.Event{Kind: "quarantined", Deployment: q.Deployment,
			Message: fmt.Sprintf("failed in %d runs in a row; skipped until %s: %s", q.Failures,
				q.NextAttempt.UTC().Format(time.RFC3339), q.LastError), Details: map[string]string{"transition": transition}})
		r.log.Warn("quarantined: later runs skip it until its backoff expires", "deployment", q.Deployment,
			"instance", q.InstanceID, "failures", q.Failures, "next_attempt", q.NextAttempt, "error", q.LastError)
	}
	for _, q := range ch.Released {
		r.hist.Add(q.InstanceID, vault.Event{Kind: "released", Deployment: q.Deployment,
			Message: "left the quarantine: in step again, or its deployment is gone"})
		r.log.Info("released from quarantine", "deployment", q.Deployment, "instance", q.InstanceID)
	}
	if ch.Empty() || r.opts.DryRun {
		return
	}
	if err := r.quar.Save(ctx, r.vault.Memory); err != nil {
		r.ledger.FailUnlessStopped(ctx, "", err)
	}
}

// saveFeeds keeps each Director's feed mark for the next run, with the
// deployments its events named that are still listed and that the run
// could not fetch (quarantined, failing): the next runs fetch them as if
// named again.
func (r *run) saveFeeds(ctx context.Context) {
	pending := func(named map[string]bool) []string {
		var out []string
		for name := range named {
			if r.seen.listed[name] && !r.ledger.WasFetched(name) {
				out = append(out, name)
			}
		}
		slices.Sort(out)
		return out
	}
	if err := r.fleet.Feeds().Save(ctx, r.vault.Memory, r.p.Now(), pending); err != nil {
		r.log.Warn("could not keep the event feed's mark; the next run reads the same events again", "error", err)
	}
}

// finish sums the run up: the summary, with each Director's report and
// errors, and what the Manager publishes.
func (r *run) finish(err error, fetched int) Result {
	if err != nil {
		r.ledger.Fail("", err)
	}
	for _, e := range r.fleet.Errors() {
		r.ledger.Fail("", e)
	}
	s := r.ledger.Summary()
	s.Aborted = err
	s.Duration = r.p.Now().Sub(r.start)
	s.DurationSeconds = s.Duration.Seconds()
	s.ManifestsFetched = fetched
	if feed, ok := r.fleet.Feeds().Report(); ok {
		s.Feed = feed
	}
	s.Directors = r.fleet.Reports()
	orphans := r.orphanList()
	s.OrphansTotal = len(orphans)
	if r.plan != nil {
		s.Plan = r.plan.Plan()
	}
	if len(s.Quarantined) == 0 && r.quar.Loaded() && err == nil {
		s.Quarantined = r.quar.Skipped()
	}
	s.Result, s.Blockers = report.Outcome(s)
	s.Converged = len(s.Blockers) == 0
	r.log.Info("reconciler run finished", "duration", s.Duration, "deployments", s.DeploymentsSeen,
		"matched", s.Matched, "unmatched", s.Unmatched, "synced", s.InstancesSynced, "orphaned", s.Orphaned,
		"writes", s.Writes, "errors", s.ErrorCount, "quarantined", len(s.Quarantined), "result", s.Result,
		"converged", s.Converged)
	res := Result{Summary: s, Orphans: orphans, Unmatched: r.ledger.UnmatchedList()}
	slices.SortFunc(res.Unmatched, func(a, b report.Unmatched) int { return cmp.Compare(a.Deployment, b.Deployment) })
	if r.quar.Loaded() {
		res.Quarantine = r.quar.List()
	}
	return res
}

// orphanList is the orphaned entries after the run (as read, with this
// run's flags applied), sorted by instance id.
func (r *run) orphanList() []report.Orphan {
	flagged := r.ledger.OrphanFlags()
	out := []report.Orphan{}
	for id, rec := range r.seen.index {
		e := flagged[id]
		switch {
		case e&memory.EffectOrphaned != 0:
			out = append(out, report.Orphan{InstanceID: id, Deployment: rec.Deployment(id), OrphanedAt: r.start.UTC().Truncate(time.Second)})
		case rec.Orphaned && e&memory.EffectUnorphaned == 0:
			at, _ := time.Parse(time.RFC3339, rec.OrphanedAt)
			out = append(out, report.Orphan{InstanceID: id, Deployment: rec.Deployment(id), OrphanedAt: at})
		}
	}
	slices.SortFunc(out, func(a, b report.Orphan) int { return cmp.Compare(a.InstanceID, b.InstanceID) })
	return out
}
