package run

import (
	"context"
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/versions"
)

// findOutdated reports the instances that do not run what their plan now
// deploys (from the index as the run read it: an instance recorded this run
// is judged by the next) and tells the webhooks of those that became
// outdated, once per version their plan wants; and the instances behind
// their Director (findBehind) among the listed deployments deps. Nothing
// is deployed. A catalog without maintenance_info costs nothing, nor do
// manifests that ask for no latest. Only a whole run looks (phases).
func findOutdated(ctx context.Context, r *run, deps []bosh.Deployment) {
	versioned := r.p.Catalog != nil && hasVersions(r)
	var list []report.Outdated
	var rep *report.OutdatedReport
	if versioned {
		versionProblems(r)
		list = versions.Outdated(r.seen.index, r.p.Catalog)
		rep = versions.Summarize(list)
		for _, s := range r.p.Catalog.Services { // a plan with none outdated counts 0
			for _, p := range s.Plans {
				if _, ok := rep.ByPlan[p.ID]; !ok && p.MaintenanceInfo != nil {
					rep.ByPlan[p.ID] = 0
				}
			}
		}
	}
	if behind := findBehind(ctx, r, deps); behind != nil {
		if rep == nil {
			rep = versions.Summarize(nil)
		}
		rep.Behind = behind
	}
	if rep != nil {
		r.ledger.Count(func(s *report.Summary) { s.Outdated = rep })
	}
	if versioned {
		announceOutdated(ctx, r, list)
	}
}

// versionProblems reports as the run's errors the plans whose version is
// lower than one an instance records (catalog.VersionProblems), naming
// their plan.yml: a catalog deployed by mistake, which no upgrade follows.
func versionProblems(r *run) {
	problems := catalog.VersionProblems(r.p.Catalog, func(yield func(id, planID, version string) bool) {
		for id, rec := range r.seen.index {
			if rec != nil && !yield(id, rec.PlanID, rec.MaintenanceVersion) {
				return
			}
		}
	})
	for _, p := range problems {
		r.ledger.Fail("", fmt.Errorf("the catalog: %s", p))
	}
}

// announceOutdated keeps in the outdated document the instances of list
// to announce (not announced yet for the version their plan now wants,
// versions.MaxFreshPerRun a run), then tells the webhooks of them: a
// document that could not be written announces nothing (the next run
// does), never the same instances every run.
func announceOutdated(ctx context.Context, r *run, list []report.Outdated) {
	var doc versions.Doc
	if _, err := r.vault.Memory.ReadState(ctx, versions.DocName, &doc); err != nil {
		r.log.Warn("outdated instances not announced: the document could not be read", "error", err)
		return
	}
	next, fresh := versions.Announce(doc, list)
	if !next.Equal(doc) {
		if err := r.vault.Memory.WriteState(ctx, versions.DocName, next); err != nil {
			r.log.Warn("the outdated document could not be written; the next run announces", "error", err)
			return
		}
	}
	for _, o := range fresh {
		had := o.Version
		if had == "" {
			had = "an unknown version"
		}
		reason := fmt.Sprintf("runs %s; plan %s deploys %s", had, o.PlanID, o.Want)
		r.log.Info("instance outdated", "instance", o.InstanceID, "deployment", o.Deployment, "reason", reason)
		r.hist.Notify(notify.Event{Type: notify.Outdated, InstanceID: o.InstanceID, Deployment: o.Deployment,
			Director: r.directorOf(o.InstanceID, o.Deployment), Reason: reason, RunID: r.id, Time: r.p.Now().UTC()})
	}
}

// hasVersions says whether a plan of the catalog declares maintenance_info.
func hasVersions(r *run) bool {
	for _, s := range r.p.Catalog.Services {
		for _, p := range s.Plans {
			if p.MaintenanceInfo != nil {
				return true
			}
		}
	}
	return false
}
