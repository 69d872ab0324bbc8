package run

import (
	"cmp"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

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
