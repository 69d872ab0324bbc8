package run

import (
	"context"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
)

// handHealth hands the health loop what the run saw: the listed
// deployments of the instances it knows (not retiring: their VMs are
// stopped on purpose), with the Director that listed each and whether a
// task or an operation held it; the deployments the feeds named; and the
// unhealthy instances whose entries go (the record gone, or the deployment
// gone while every Director listed). The loop asks the Directors on its
// own budget; the run never waits for it. A dry or scoped run hands
// nothing.
func handHealth(_ context.Context, r *run) {
	if r.opts.DryRun || !r.opts.Scope.Empty() || r.p.Health == nil {
		return
	}
	rep := report.HealthReport{}
	h := health.Handover{At: r.start, RunID: r.id, Targets: make(map[string]health.Target, len(r.listed)), Named: r.view.HealthNamed()}
	for name := range r.listed {
		id, ok := r.byDep[name]
		rec := r.index[id]
		if !ok || rec == nil || rec.Retiring != nil {
			continue
		}
		busy := r.locked[name] || rec.OperationInProgress()
		h.Targets[name] = health.Target{Instance: id, Director: r.fleet.Owner(name), Busy: busy}
		if busy {
			rep.Busy++
		}
	}
	allListed := fleet.HealthOf(r.fleet).AllListed()
	current := r.p.Health.Current()
	for id, e := range current.Unhealthy {
		rec := r.index[id]
		if rec == nil || rec.Retiring != nil || (!r.listed[e.Deployment] && allListed) {
			h.Gone = append(h.Gone, id)
		}
	}
	r.p.Health.Hand(h)
	rep.Handed, rep.Named, rep.Gone = len(h.Targets), len(h.Named), len(h.Gone)
	rep.Unhealthy = len(current.Unhealthy) - len(h.Gone)
	r.ledger.Count(func(s *report.Summary) { s.Health = &rep })
}
