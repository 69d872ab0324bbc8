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
	scope  report.Scope // only records in scope are looked at
	fleet  *fleet.Fleet // tasks in flight; records whose Director is out of the run
	grace  time.Duration
	start  time.Time
	index  map[string]*vault.Record // as read at the start of the run
	claims *match.Claims[*held]     // instances this run matched
	writer records.Writer
	ledger *memory.Ledger
	policy memory.Policy
	log    *slog.Logger
}

// orphans is the run's orphaner over the instances it claimed.
func (r *run) orphans(claims *match.Claims[*held]) *orphaner {
	return &orphaner{scope: r.opts.Scope, fleet: r.fleet, grace: r.p.Config.OrphanGracePeriod, start: r.start,
		index: r.seen.index, claims: claims, writer: r.writer, ledger: r.ledger, policy: r.policy, log: r.log}
}

// inFlightStates are the task states of a provision or deprovision still running.
var inFlightStates = []string{bosh.TaskQueued, bosh.TaskProcessing, bosh.TaskCancelling}

// flag flags the index entries whose deployment is gone: not one that
// this run matched, not one whose deployment is listed (even unmatched or
// locked), not one whose Director is out of the run (unknown), not while
// the broker's operation on it is in progress or a Director task for its
// deployment is queued or running, and not within the grace period after
// its creation. Entries already flagged stay as they are.
func (o *orphaner) flag(ctx context.Context, listed []bosh.Deployment) {
	names := make(map[string]bool, len(listed))
	for _, d := range listed {
		names[d.Name] = true
	}
	var candidates []string
	unknown := 0
	for id, rec := range o.index {
		if o.claims.IsClaimed(id) || names[rec.Deployment(id)] || !o.scope.CoversRecord(id, rec) {
			continue
		}
		if o.fleet.Unknown(rec) {
			if !rec.Orphaned { // an orphan stays one, and is counted as one
				unknown++
			}
			continue
		}
		if !rec.Orphaned && MayOrphan(rec, o.start, o.grace) {
			candidates = append(candidates, id)
		}
	}
	o.ledger.Count(func(s *report.Summary) { s.Unknown = unknown })
	if len(candidates) == 0 {
		return
	}
	busy, err := o.busyDeployments(ctx)
	if err != nil {
		o.ledger.Fail("", fmt.Errorf("no orphan flagged: %w", err))
		return
	}
	slices.Sort(candidates)
	may := func(rec *vault.Record) bool { return MayOrphan(rec, o.start, o.grace) }
	for _, id := range candidates {
		if name := o.index[id].Deployment(id); busy[name] {
			o.log.Debug("orphan candidate has a task in flight", "instance", id, "deployment", name)
			continue
		}
		o.writer.Queue(records.OrphanChange(id, o.start, may))
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
