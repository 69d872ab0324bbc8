package upgrade

import (
	"context"
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// Resume finishes the upgrade a journal entry holds: its daemon stopped
// (or its wait was cut) while its task ran. The task is followed to its
// end as One would: the version recorded, or the rollback.
func (u *Upgrader) Resume(ctx context.Context, e report.UpgradeEntry) (res report.UpgradeResult) {
	r := &res
	*r = report.UpgradeResult{InstanceID: e.InstanceID, Deployment: e.Deployment, Director: e.Director, ServiceID: e.ServiceID,
		PlanID: e.PlanID, From: e.From, To: e.To, State: report.UpgradeInFlight, Backup: e.Backup, StartedAt: e.StartedAt, Attempts: 1}
	defer func() { r.EndedAt, r.Reason = u.Now(), cut(r.Reason) }()
	rec, err := u.Records.Record(ctx, e.InstanceID)
	if err != nil {
		r.State, r.Reason = report.UpgradeInterrupted, "reading its record: "+err.Error()
		return
	}
	if rec == nil || rec.LastOperation == nil || rec.LastOperation.ContextID != e.ContextID {
		r.State, r.Reason = report.UpgradeSkipped, "its record no longer holds the upgrade's operation: nothing to finish"
		if err := u.Journal.Forget(ctx, e.InstanceID); err != nil {
			u.Log.Warn("could not write the upgrade journal", "instance", e.InstanceID, "error", err)
		}
		return
	}
	t, ok := u.Targets(e.Director)
	if !ok {
		r.State, r.Reason = report.UpgradeInterrupted, fmt.Sprintf("its Director %q is not configured to deploy", e.Director)
		return
	}
	up := &upgrade{UpgradeEntry: e, target: t, taskID: rec.LastOperation.TaskID}
	if up.taskID == 0 && t.Tasks != nil { // its id was never recorded: the task has the upgrade's context id
		if task, err := operation.Find(ctx, operation.OfDeployment(t.Tasks, e.Deployment), e.ContextID); err == nil {
			up.taskID = task.ID
		}
	}
	r.TaskID = up.taskID
	if up.taskID == 0 {
		r.State, r.Reason = report.UpgradeInterrupted, "its task id was never recorded: the reconciler settles its operation from the "+
			"Director (stuck_operation_after); the next fleet upgrade tries it again"
		if err := u.Journal.Forget(ctx, e.InstanceID); err != nil {
			u.Log.Warn("could not write the upgrade journal", "instance", e.InstanceID, "error", err)
		}
		return
	}
	u.Log.Info("finishing an upgrade cut short", "instance", e.InstanceID, "task", up.taskID, "fleet", e.Fleet)
	u.follow(ctx, up, r, nil)
	return
}
