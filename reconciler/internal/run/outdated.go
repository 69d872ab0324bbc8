package run

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/versions"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// outdatedLook is the outdated phase: it reports the instances that do not
// run what their plan now deploys (from the index as the run read it: an
// instance recorded this run is judged by the next) and tells the webhooks
// of those that became outdated, once per version their plan wants; and
// the instances behind their Director (behindLook) among the listed
// deployments. Nothing is deployed. A catalog without maintenance_info
// costs nothing, nor do manifests that ask for no latest.
type outdatedLook struct {
	catalog  *catalog.Catalog  // nil: versions are not looked at
	state    memory.StateStore // keeps the outdated document (what was announced)
	behind   behindLook
	notify   func(notify.Event)
	director func(id, deployment string) string // names an instance's Director in notifications
	now      func() time.Time
	log      *slog.Logger
}

// outdatedIn is what the outdated phase is given: the listing, the
// deployments listed, and the run's id.
type outdatedIn struct {
	seen  listing
	deps  []bosh.Deployment
	runID string
}

// Run answers the phase's section of the summary (nil: nothing to report)
// and the catalog's problems, each an error of the run: a plan whose
// version is lower than one an instance records (catalog.VersionProblems,
// naming its plan.yml), a catalog deployed by mistake that no upgrade
// follows.
func (o outdatedLook) Run(ctx context.Context, in outdatedIn) (*report.OutdatedReport, []error) {
	versioned := o.catalog != nil && hasVersions(o.catalog)
	var list []report.Outdated
	var rep *report.OutdatedReport
	var problems []error
	if versioned {
		problems = versionProblems(o.catalog, in.seen)
		list = versions.Outdated(in.seen.index, o.catalog)
		rep = versions.Summarize(list)
		for _, s := range o.catalog.Services { // a plan with none outdated counts 0
			for _, p := range s.Plans {
				if _, ok := rep.ByPlan[p.ID]; !ok && p.MaintenanceInfo != nil {
					rep.ByPlan[p.ID] = 0
				}
			}
		}
	}
	if behind := o.behind.Run(ctx, in.seen, in.deps); behind != nil {
		if rep == nil {
			rep = versions.Summarize(nil)
		}
		rep.Behind = behind
	}
	if versioned {
		o.announce(ctx, list, in.runID)
	}
	return rep, problems
}

// versionProblems are the plans of c whose version is lower than one an
// instance of the listing's index records.
func versionProblems(c *catalog.Catalog, seen listing) []error {
	problems := catalog.VersionProblems(c, func(yield func(id, planID, version string) bool) {
		for id, rec := range seen.index {
			if rec != nil && !yield(id, rec.PlanID, rec.MaintenanceVersion) {
				return
			}
		}
	})
	out := make([]error, 0, len(problems))
	for _, p := range problems {
		out = append(out, fmt.Errorf("the catalog: %s", p))
	}
	return out
}

// announce keeps in the outdated document the instances of list to
// announce (not announced yet for the version their plan now wants,
// versions.MaxFreshPerRun a run), then tells the webhooks of them: a
// document that could not be written announces nothing (the next run
// does), never the same instances every run.
func (o outdatedLook) announce(ctx context.Context, list []report.Outdated, runID string) {
	var doc versions.Doc
	if _, err := o.state.ReadState(ctx, versions.DocName, &doc); err != nil {
		o.log.Warn("outdated instances not announced: the document could not be read", "error", err)
		return
	}
	next, fresh := versions.Announce(doc, list)
	if !next.Equal(doc) {
		if err := o.state.WriteState(ctx, versions.DocName, next); err != nil {
			o.log.Warn("the outdated document could not be written; the next run announces", "error", err)
			return
		}
	}
	for _, f := range fresh {
		had := f.Version
		if had == "" {
			had = "an unknown version"
		}
		reason := fmt.Sprintf("runs %s; plan %s deploys %s", had, f.PlanID, f.Want)
		o.log.Info("instance outdated", "instance", f.InstanceID, "deployment", f.Deployment, "reason", reason)
		o.notify(notify.Event{Type: notify.Outdated, InstanceID: f.InstanceID, Deployment: f.Deployment,
			Director: o.director(f.InstanceID, f.Deployment), Reason: reason, RunID: runID, Time: o.now().UTC()})
	}
}

// hasVersions says whether a plan of c declares maintenance_info.
func hasVersions(c *catalog.Catalog) bool {
	for _, s := range c.Services {
		for _, p := range s.Plans {
			if p.MaintenanceInfo != nil {
				return true
			}
		}
	}
	return false
}
