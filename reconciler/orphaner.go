package reconciler

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// orphaner is the last stage: it flags the index entries whose deployment
// is gone as orphaned, through the index writer. Orphans are never deleted;
// an entry whose deployment comes back is un-flagged by its index change.
type orphaner struct {
	scope Scope // only records in scope are looked at
	tasks Tasks // nil: no task check
	// unknown says whether a record's Director could not be listed: its
	// deployment may well exist, and it is not flagged (several Directors).
	unknown func(*vault.Record) bool
	grace   time.Duration            // Config.OrphanGracePeriod
	start   time.Time                // the run's start
	index   map[string]*vault.Record // as read at the start of the run
	claims  *claims                  // instances this run matched
	writer  *indexWriter
	state   *runState
	retry   retrier
	log     *slog.Logger
}

// inFlightStates are the task states of a provision or deprovision still running.
var inFlightStates = []string{bosh.TaskQueued, bosh.TaskProcessing, bosh.TaskCancelling}

// flag flags the index entries whose deployment is gone: not one that
// this run matched, not one whose deployment is listed (even unmatched or
// locked), not while the broker's operation on it is in progress or a
// Director task for its deployment is queued or running, and not within the
// grace period after its creation. Entries already flagged stay as they are.
func (o *orphaner) flag(ctx context.Context, listed []bosh.Deployment) {
	names := make(map[string]bool, len(listed))
	for _, d := range listed {
		names[d.Name] = true
	}
	var candidates []string
	unknown := 0
	for id, rec := range o.index {
		if o.claims.isClaimed(id) || names[rec.Deployment(id)] || !o.scope.CoversRecord(id, rec) {
			continue
		}
		if o.unknown(rec) {
			if !rec.Orphaned { // an orphan stays one, and is counted as one
				unknown++
			}
			continue
		}
		if !rec.Orphaned && o.mayOrphan(rec) {
			candidates = append(candidates, id)
		}
	}
	o.state.count(func(s *Summary) { s.Unknown = unknown })
	if len(candidates) == 0 {
		return
	}
	busy, err := o.busyDeployments(ctx)
	if err != nil {
		o.state.fail("", fmt.Errorf("no orphan flagged: %w", err))
		return
	}
	slices.Sort(candidates)
	for _, id := range candidates {
		if name := o.index[id].Deployment(id); busy[name] {
			o.log.Debug("orphan candidate has a task in flight", "instance", id, "deployment", name)
			continue
		}
		o.writer.queue(o.orphanChange(id))
	}
}

// mayOrphan says whether rec may be flagged: no operation in progress, and
// past the grace period.
func (o *orphaner) mayOrphan(rec *vault.Record) bool {
	if operationInProgress(rec) {
		return false
	}
	grace := o.grace
	return rec.Created == 0 || o.start.Sub(time.Unix(rec.Created, 0)) >= grace
}

// busyDeployments names the deployments with a provision, update or
// deprovision task queued or running (one Director request).
func (o *orphaner) busyDeployments(ctx context.Context) (map[string]bool, error) {
	busy := map[string]bool{}
	if o.tasks == nil {
		return busy, nil
	}
	var tasks []bosh.Task
	err := o.retry.do(ctx, "tasks", "in flight", func(ctx context.Context) (err error) {
		tasks, err = o.tasks.Tasks(ctx, bosh.TaskQuery{States: inFlightStates})
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

// orphanChange flags an entry orphaned, checking again on the entry as it
// is when written.
func (o *orphaner) orphanChange(id string) *pending {
	p := &pending{id: id, eff: new(effect)}
	now := stamp(o.start)
	p.change = func(cur *vault.Record) (*vault.Record, error) {
		*p.eff = 0
		if cur == nil || cur.Orphaned || !o.mayOrphan(cur) {
			return nil, nil
		}
		cur.Orphaned, cur.OrphanedAt = true, now
		*p.eff = effectOrphaned
		return cur, nil
	}
	return p
}
