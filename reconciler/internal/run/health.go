package run

import (
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// handing is the health phase: it hands the health loop what the run saw,
// the listed deployments of the instances it knows (not retiring: their VMs
// are stopped on purpose), with the Director that listed each and whether a
// task or an operation held it; the deployments the feeds named; and the
// unhealthy instances whose entries go (the record gone, or the deployment
// gone while every Director listed). The loop asks the Directors on its own
// budget; the run never waits for it.
type handing struct {
	tracker handTracker
}

// handTracker is where the run and the health loop meet (*health.Tracker).
type handTracker interface {
	Current() health.Doc
	Hand(h health.Handover)
}

// handingIn is what the health phase is given: the listing, who listed each
// deployment, whether every Director listed, what the feeds named, and the
// run's id and start.
type handingIn struct {
	seen      listing
	owner     func(deployment string) string
	allListed bool
	named     []string
	runID     string
	at        time.Time
}

// Run hands the loop the run's handover and answers the phase's section of
// the summary.
func (h handing) Run(in handingIn) *report.HealthReport {
	rep := report.HealthReport{}
	ho := health.Handover{At: in.at, RunID: in.runID, Targets: make(map[string]health.Target, len(in.seen.listed)), Named: in.named}
	for name := range in.seen.listed {
		id, ok := in.seen.byDep[name]
		rec := in.seen.index[id]
		if !ok || rec == nil || rec.Retiring != nil {
			continue
		}
		busy := in.seen.locked[name] || rec.OperationInProgress()
		ho.Targets[name] = health.Target{Instance: id, Director: in.owner(name), Busy: busy}
		if busy {
			rep.Busy++
		}
	}
	current := h.tracker.Current()
	for id, e := range current.Unhealthy {
		rec := in.seen.index[id]
		if rec == nil || rec.Retiring != nil || (!in.seen.listed[e.Deployment] && in.allListed) {
			ho.Gone = append(ho.Gone, id)
		}
	}
	h.tracker.Hand(ho)
	rep.Handed, rep.Named, rep.Gone = len(ho.Targets), len(ho.Named), len(ho.Gone)
	rep.Unhealthy = len(current.Unhealthy) - len(ho.Gone)
	return &rep
}
