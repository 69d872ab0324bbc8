package run

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// orphaner flags the index entries whose deployment is gone as orphaned,
// through the writer. Orphans are never deleted; an entry whose deployment
// comes back is un-flagged by its index change.
type orphaner struct {
	in     orphanIn     // its listed is set by flag
	fleet  *fleet.Fleet // tasks in flight
	writer records.Writer
	ledger *memory.Ledger
	policy memory.Policy
	log    *slog.Logger
}

// orphanIn is what the orphaner decides from: the index as read at the
// run's start, the deployments listed, the instances the run matched,
// which records' Director is out of the run, the run's scope, its start
// and the grace period after a record's creation.
type orphanIn struct {
	index    map[string]*vault.Record
	listed   map[string]bool // the deployments listed (with sets it)
	claimed  func(id string) bool
	outOfRun func(*vault.Record) bool
	scope    report.Scope // only records in scope are looked at
	start    time.Time
	grace    time.Duration
}

// orphans is the run's orphaner over the instances it claimed.
func (r *run) orphans(claims *match.Claims[*held]) *orphaner {
	return &orphaner{in: orphanIn{index: r.seen.index, claimed: claims.IsClaimed, outOfRun: r.fleet.Unknown, scope: r.opts.Scope,
		start: r.start, grace: r.p.Config.OrphanGracePeriod}, fleet: r.fleet, writer: r.writer, ledger: r.ledger, policy: r.policy, log: r.log}
}

// with is in with the deployments listed (each listed one counts, matched
// or not, locked by a task or not).
func (in orphanIn) with(listed []bosh.Deployment) orphanIn {
	in.listed = make(map[string]bool, len(listed))
	for _, d := range listed {
		in.listed[d.Name] = true
	}
	return in
}

// orphanWhy is why an index entry is flagged orphaned by the run, or why not.
type orphanWhy string

// Why an entry is flagged, or not.
const (
	orphanFlagged    orphanWhy = "flagged"
	orphanClaimed    orphanWhy = "matched this run"
	orphanListed     orphanWhy = "its deployment is listed"
	orphanOutOfScope orphanWhy = "out of the run's scope"
	orphanAlready    orphanWhy = "already an orphan"
	orphanUnknown    orphanWhy = "its Director is out of the run"
	orphanBusy       orphanWhy = "the broker's operation is in progress"
	orphanYoung      orphanWhy = "within the grace period after its creation"
	orphanTask       orphanWhy = "a Director task for its deployment is in flight"
)

// why says whether the entry id (rec) is flagged, or why not: not one out
// of the run's scope, not one the run matched, not one whose deployment is
// listed, not one already flagged (it stays as it is), not one whose Director is
// out of the run, not while the broker's operation on it is in progress,
// and not within the grace period after its creation. One it flags may
// still wait for a Director task (flagged).
func (in orphanIn) why(id string, rec *vault.Record) orphanWhy {
	switch name := rec.Deployment(id); {
	case !in.scope.CoversRecord(id, rec):
		return orphanOutOfScope
	case in.claimed(id):
		return orphanClaimed
	case in.listed[name]:
		return orphanListed
	case rec.Orphaned:
		return orphanAlready
	case in.outOfRun(rec):
		return orphanUnknown
	case rec.OperationInProgress():
		return orphanBusy
	case !MayOrphan(rec, in.start, in.grace):
		return orphanYoung
	}
	return orphanFlagged
}

// candidates are the entries flagged unless a Director task is in flight
// for their deployment, in order, and how many entries are not flagged
// because their Director is out of the run (an orphan already flagged is
// counted as one, not among them).
func (in orphanIn) candidates() (ids []string, unknown int) {
	for id, rec := range in.index {
		switch in.why(id, rec) {
		case orphanFlagged:
			ids = append(ids, id)
		case orphanUnknown:
			unknown++
		}
	}
	slices.Sort(ids)
	return ids, unknown
}

// flagged splits the candidates, in order: those flagged, and those that
// wait because busy (the deployments with a Director task in flight) names
// their deployment (orphanTask).
func (in orphanIn) flagged(candidates []string, busy map[string]bool) (flag, waiting []string) {
	for _, id := range candidates {
		if busy[in.index[id].Deployment(id)] {
			waiting = append(waiting, id)
		} else {
			flag = append(flag, id)
		}
	}
	return flag, waiting
}

// inFlightStates are the task states of a provision or deprovision still running.
var inFlightStates = []string{bosh.TaskQueued, bosh.TaskProcessing, bosh.TaskCancelling}

// flag flags the index entries whose deployment is gone (orphanIn.why
// says which), asking the Directors for their tasks in flight only when
// there is a candidate. Entries already flagged stay as they are.
func (o *orphaner) flag(ctx context.Context, listed []bosh.Deployment) {
	in := o.in.with(listed)
	candidates, unknown := in.candidates()
	o.ledger.Count(func(s *report.Summary) { s.Unknown = unknown })
	if len(candidates) == 0 {
		return
	}
	busy, err := o.busyDeployments(ctx)
	if err != nil {
		o.ledger.Fail("", fmt.Errorf("no orphan flagged: %w", err))
		return
	}
	may := func(rec *vault.Record) bool { return MayOrphan(rec, in.start, in.grace) }
	flag, waiting := in.flagged(candidates, busy)
	for _, id := range waiting {
		o.log.Debug("orphan candidate has a task in flight", "instance", id, "deployment", in.index[id].Deployment(id))
	}
	for _, id := range flag {
		o.writer.Queue(records.OrphanChange(id, in.start, may))
	}
}

// MayOrphan says whether a record whose deployment is gone may be flagged
// orphaned at time start: no broker operation in progress on it, and past
// the grace period after its creation (a record that does not say when it
// was created is past it).
func MayOrphan(rec *vault.Record, start time.Time, grace time.Duration) bool {
	if rec.OperationInProgress() {
		return false
	}
	return rec.Created == 0 || start.Sub(time.Unix(rec.Created, 0)) >= grace
}

// busyDeployments names the deployments with a provision, update or
// deprovision task queued or running (one request per Director).
func (o *orphaner) busyDeployments(ctx context.Context) (map[string]bool, error) {
	busy := map[string]bool{}
	var tasks []bosh.Task
	err := o.policy.Do(ctx, "tasks", "in flight", func(ctx context.Context) (err error) {
		tasks, err = o.fleet.Tasks(ctx, bosh.TaskQuery{States: inFlightStates})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the Director's tasks in flight: %w", err)
	}
	for _, t := range tasks {
		busy[t.Deployment] = true
	}
	return busy, nil
}
