package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// retirement carries the orphan deployments' retirement on, in two steps
// (in a dry run, lists what it would do), after a whole platform read: a
// retiring instance the platform lists again is started (whatever the
// mode); with reconciler.remediation.orphan_deployments delete, an orphan
// deployment proven (platform.Entry.Proven: at least three whole reads
// spread over min_age) and not locked by a task has its VMs stopped (the
// first step), and one stopped for retirement_period without the platform
// listing it again is deleted (the second); at most max_per_run of those
// two a run, oldest proof first; none when so many look orphaned that the
// read is more likely wrong than the fleet.
type retirement struct {
	cfg  config.RemediationConfig
	ops  ports.Operations // nil: orphan deployments are only reported
	tell teller
	log  *slog.Logger
}

// retireIn is what the retirement is given: the cross-check's judgement
// (whose report it adds its steps to), the platform document as carried
// on, the listing, the run's start and whether it is dry.
type retireIn struct {
	judged *platform.Judged
	doc    platform.Doc
	seen   listing
	start  time.Time
	dryRun bool
}

// step is an orphan deployment's next retirement step.
type step struct {
	id, action string
	since      int64
}

// actionStop is a retirement's first step (report.Remediation.Action); its
// second is config.OrphanDeploymentsDelete, its end "start".
const (
	actionStop  = "stop"
	actionStart = "start"
)

// Run takes the retirement's steps and answers the run's errors.
func (rt retirement) Run(ctx context.Context, in retireIn) []runError {
	var errs []runError
	j := in.judged
	if rt.ops != nil {
		errs = rt.unretire(ctx, in)
	}
	now := rt.tell.now()
	ready, refused := rt.steps(in, now)
	switch {
	case len(ready) == 0:
		return errs
	case refused != "":
		j.Report.Refused = refused
		return append(errs, runError{err: errors.New("platform cross-check: " + refused)})
	case rt.ops == nil:
		j.Report.Refused = "the reconciler runs without the broker: orphan deployments are only reported"
		return errs
	}
	for _, c := range ready[:min(len(ready), rt.cfg.MaxPerRun)] {
		if ctx.Err() != nil {
			break
		}
		e := in.doc.Absent[c.id]
		rem := report.Remediation{InstanceID: c.id, Deployment: in.seen.index[c.id].Deployment(c.id), Action: c.action}
		reason := fmt.Sprintf("the platform has had no instance %s in %d reads since %s (an orphan deployment)",
			c.id, e.Reads, time.Unix(e.Since, 0).UTC().Format(time.RFC3339))
		if !in.dryRun {
			var err error
			if c.action == actionStop {
				rem.Backup, rem.TaskID, err = rt.ops.StopOrphanDeployment(ctx, c.id, reason, now.Add(rt.cfg.RetirementPeriod))
			} else {
				rem.Backup, rem.TaskID, err = rt.ops.DeleteOrphanDeployment(ctx, c.id, reason)
			}
			if failed, e := retireFailed(ctx, &rem, err); failed {
				errs = append(errs, e...)
			} else {
				rt.retired(rem, reason)
			}
		}
		if c.action == actionStop {
			j.Report.Stopped = append(j.Report.Stopped, rem)
		} else {
			j.Report.Deleted = append(j.Report.Deleted, rem)
		}
	}
	return errs
}

// steps are the retirement steps ready at now, oldest proof first (none
// without delete mode), and, when so many look orphaned that none may be
// taken, why.
func (rt retirement) steps(in retireIn, now time.Time) (ready []step, refused string) {
	j := in.judged
	if rt.cfg.OrphanDeployments != config.OrphanDeploymentsDelete || len(j.OrphanDeployments) == 0 {
		return nil, ""
	}
	for _, id := range j.OrphanDeployments {
		e, ok := in.doc.Absent[id]
		rec := in.seen.index[id]
		if !ok || !e.Proven(in.start, rt.cfg.MinAge) || in.seen.locked[rec.Deployment(id)] {
			continue
		}
		switch {
		case !retireStopped(rec):
			ready = append(ready, step{id: id, since: e.Since, action: actionStop})
		case rec.Retiring.Due(now) && absentThroughout(e, rec.Retiring, now, rt.cfg.RetirementPeriod):
			ready = append(ready, step{id: id, since: e.Since, action: config.OrphanDeploymentsDelete})
		}
	}
	if len(ready) == 0 {
		return nil, ""
	}
	slices.SortFunc(ready, func(a, b step) int { return cmp.Or(cmp.Compare(a.since, b.since), cmp.Compare(a.id, b.id)) })
	return ready, tooManyOrphans(len(j.OrphanDeployments), len(in.seen.index), rt.cfg)
}

// retireStopped says whether the retirement's first step is done: the record is
// retiring and its last operation is the stop, succeeded.
func retireStopped(rec *vault.Record) bool {
	op := rec.LastOperation
	return rec.Retiring != nil && op != nil && op.Type == actionStop && op.State == vault.OperationSucceeded
}

// absentThroughout says whether the platform's proof covers the whole
// retirement: absent since before its VMs were stopped, or for a whole
// period by the proof's own count (a proof that started again).
func absentThroughout(e platform.Entry, ret *vault.Retirement, now time.Time, period time.Duration) bool {
	stoppedAt, err := time.Parse(time.RFC3339, ret.StoppedAt)
	since := time.Unix(e.Since, 0)
	return (err == nil && !since.After(stoppedAt)) || now.Sub(since) >= period
}

// unretire starts again the retiring instances the platform lists again
// (in a dry run, lists them): their retirement ends when the start
// succeeds.
func (rt retirement) unretire(ctx context.Context, in retireIn) []runError {
	var ids []string
	for id, rec := range in.seen.index {
		if rec.Retiring != nil && in.judged.States[id] == report.InStep && !rec.OperationInProgress() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	var errs []runError
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		rec := in.seen.index[id]
		rem := report.Remediation{InstanceID: id, Deployment: rec.Deployment(id), Action: actionStart}
		reason := fmt.Sprintf("the platform lists instance %s again, whose VMs were stopped on %s to retire it", id, rec.Retiring.StoppedAt)
		if !in.dryRun {
			var err error
			rem.TaskID, err = rt.ops.StartRetired(ctx, id, reason)
			if failed, e := retireFailed(ctx, &rem, err); failed {
				errs = append(errs, e...)
			} else {
				rt.retired(rem, reason)
			}
		}
		in.judged.Report.Started = append(in.judged.Report.Started, rem)
	}
	return errs
}

// retireFailed notes a retirement step's error in rem and, unless it is a
// refusal of the instance as it is now or the run being stopped
// (guard.Stopped), answers it as an error of the run; false for nil.
func retireFailed(ctx context.Context, rem *report.Remediation, err error) (bool, []runError) {
	if err == nil {
		return false, nil
	}
	rem.Error = err.Error()
	var refused interface{ Refusal() bool }
	if errors.As(err, &refused) || guard.Stopped(ctx, err) {
		return true, nil
	}
	return true, []runError{{key: report.InstanceKey(rem.InstanceID),
		err: fmt.Errorf("instance %s: the %s of its orphan deployment: %w", rem.InstanceID, rem.Action, err)}}
}

// retired writes a retirement step (a stop, a start, a deletion) to the
// history, the log and the webhooks.
func (rt retirement) retired(rem report.Remediation, reason string) {
	var msg string
	switch rem.Action {
	case actionStop:
		msg = fmt.Sprintf("orphan deployment's VMs stopped (task %d) after backup %s, its deletion due in %s unless the platform lists it again: %s",
			rem.TaskID, rem.Backup, rt.cfg.RetirementPeriod, reason)
	case actionStart:
		msg = fmt.Sprintf("retirement ended: VMs started again (task %d): %s", rem.TaskID, reason)
	default:
		msg = fmt.Sprintf("orphan deployment deleted (task %d) after backup %s: %s", rem.TaskID, rem.Backup, reason)
	}
	rt.log.Warn("orphan deployment: "+rem.Action, "instance", rem.InstanceID, "deployment", rem.Deployment, "task", rem.TaskID, "backup", rem.Backup)
	rt.tell.event(rem.InstanceID, rem.Deployment, "remediated", notify.Remediated, msg,
		map[string]string{"action": rem.Action, "backup": rem.Backup, "task_id": fmt.Sprint(rem.TaskID)})
}

// tooManyOrphans says why nothing is retired when n of the index's records
// look like orphan deployments at once: more than max_per_run, or more than
// orphan_deployments_max_share of them, whatever the fleet's size (a
// platform read that leaves instances out would drain a small fleet, or a
// large one max_per_run a run); "" when it is not too many.
func tooManyOrphans(n, records int, cfg config.RemediationConfig) string {
	if n <= cfg.MaxPerRun && float64(n) <= cfg.OrphanDeploymentsMaxShare*float64(records) {
		return ""
	}
	return fmt.Sprintf("%d of the %d instances look like orphan deployments, more than max_per_run (%d) or %.0f%% of them "+
		"(orphan_deployments_max_share): the platform read is more likely wrong (cf.broker_name, another platform's Cloud "+
		"Controller, instances left out) than the fleet; none is deleted", n, records, cfg.MaxPerRun, 100*cfg.OrphanDeploymentsMaxShare)
}
