package upgrade

import (
	"context"
	"fmt"
	"maps"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/redeploy"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// follow waits for the upgrade's task, then records its end: the new
// version and manifest (its slot freed first: nil when it has none, a
// resumed upgrade), or the rollback.
func (u *Upgrader) follow(ctx context.Context, up *upgrade, r *report.UpgradeResult, slot Slot) {
	wctx, cancel := context.WithTimeout(ctx, u.TaskTimeout)
	task, err := up.target.Deployer.WaitTask(wctx, up.taskID, u.Poll)
	cancel()
	if err != nil {
		r.State, r.Reason = report.UpgradeInterrupted, fmt.Sprintf("the wait for task %d was cut (%v): its operation stays in progress "+
			"and the next fleet upgrade finishes it", up.taskID, err)
		return
	}
	if task.State != bosh.TaskDone {
		u.rollBack(ctx, up, task, r)
		return
	}
	var errands []string // the plan's post-deploy errands, run before the slot is freed: their tasks are the Director's work too
	if u.PostDeploy != nil {
		errands = u.PostDeploy(up.PlanID)
	}
	errand := postDeploy{run: up.target.Errands, waiter: up.target.Deployer, poll: u.Poll, timeout: u.TaskTimeout}.
		after(ctx, up.Deployment, up.ContextID, errands)
	if errand != "" && ctx.Err() != nil { // stopping: the journal keeps it, and the next fleet upgrade runs its errands again
		r.State, r.Reason = report.UpgradeInterrupted, fmt.Sprintf("task %d ended done; stopping during its post-deploy errands (%s): "+
			"its operation stays in progress and the next fleet upgrade finishes it", up.taskID, errand)
		return
	}
	if slot != nil {
		slot.Free() // what is left is Vault's: the next deploy need not wait for it
	}
	u.succeeded(ctx, up, r, errand)
}

// succeeded records the manifest the task deployed and the plan's version,
// and puts the record's operation back as it was. errand says why a
// post-deploy errand failed ("" none did): the deploy's manifest and
// version are recorded all the same (they run), and the upgrade ends
// ErrandFailed, a failure of the fleet's rules.
func (u *Upgrader) succeeded(ctx context.Context, up *upgrade, r *report.UpgradeResult, errand string) {
	text := up.rendered
	if text == "" { // resumed: what the Director runs, when it is what the upgrade deployed
		var err error
		if text, err = up.target.Director.Manifest(ctx, up.Deployment); err != nil || digest(text) != up.ManifestSHA256 {
			r.State, r.Reason = report.UpgradeInterrupted, fmt.Sprintf("task %d ended done, but what Director %s runs now could not be "+
				"read or is not what the upgrade deployed (%v): nothing recorded", up.taskID, up.target.Name, err)
			u.mark().unmark(ctx, up)
			_ = u.Journal.Forget(ctx, up.InstanceID)
			return
		}
	}
	if rec, err := u.Records.Record(ctx, up.InstanceID); err == nil && (rec == nil || rec.LastOperation == nil ||
		rec.LastOperation.ContextID != up.ContextID) {
		// Another operation took the instance over once the broker had
		// settled this one: its manifest is the one Vault must keep.
		r.State, r.Reason = report.UpgradeUpgraded, fmt.Sprintf("task %d ended done; another operation of the instance started since: "+
			"it records the instance, not this upgrade", up.taskID)
		u.mark().end(ctx, up, report.UpgradeUpgraded, "")
		return
	}
	err := u.Documents.PutManifest(ctx, up.InstanceID, text)
	if err == nil {
		err = u.mark().finishOp(ctx, up, func(next *vault.Record) { next.MaintenanceVersion = up.To })
	}
	if err != nil {
		r.State, r.Reason = report.UpgradeInterrupted, fmt.Sprintf("task %d ended done, but recording the upgrade failed (%v): "+
			"its operation stays in progress and the next fleet upgrade records it", up.taskID, err)
		return
	}
	r.State = report.UpgradeUpgraded
	details := map[string]string{}
	maps.Copy(details, up.preview) // what the Director's diff said it changes, what was kept and allowed
	maps.Copy(details, map[string]string{"from": up.From, "to": up.To, "task_id": fmt.Sprint(up.taskID), "backup": up.Backup,
		"deployed": "true", "manifest_sha256": up.ManifestSHA256})
	u.event(ctx, up.InstanceID, vault.Event{Kind: "upgraded", Deployment: up.Deployment,
		Message: fmt.Sprintf("upgraded from %s to %s by task %d", orUnknown(up.From), up.To, up.taskID), Details: details})
	if errand != "" {
		r.State, r.Reason = report.UpgradeErrandFailed, errand
		u.event(ctx, up.InstanceID, vault.Event{Kind: "errand_failed", Deployment: up.Deployment, Message: cut(errand),
			Details: map[string]string{"to": up.To, "task_id": fmt.Sprint(up.taskID)}})
		u.Log.Warn("instance upgraded, but a post-deploy errand failed", "instance", up.InstanceID, "to", up.To, "reason", errand)
	} else {
		u.Log.Info("instance upgraded", "instance", up.InstanceID, "to", up.To, "task", up.taskID)
	}
	u.mark().end(ctx, up, r.State, r.Reason)
}

// rollBack deploys the manifest of the backup taken before the upgrade,
// waits for it, records how both ended and quarantines the instance.
func (u *Upgrader) rollBack(ctx context.Context, up *upgrade, task bosh.Task, r *report.UpgradeResult) {
	failed := fmt.Sprintf("task %d ended %s: %s", task.ID, task.State, task.Result)
	if ctx.Err() != nil { // stopping: the journal keeps it, the next fleet upgrade rolls it back
		r.State, r.Reason = report.UpgradeInterrupted, failed+"; stopping before its rollback: the next fleet upgrade rolls it back"
		return
	}
	u.Log.Warn("upgrade failed; rolling back", "instance", up.InstanceID, "task", task.ID, "state", task.State, "result", task.Result)
	u.event(ctx, up.InstanceID, vault.Event{Kind: "upgrade_failed", Deployment: up.Deployment,
		Message: fmt.Sprintf("upgrade from %s to %s failed: %s", orUnknown(up.From), up.To, failed),
		Details: map[string]string{"from": up.From, "to": up.To, "task_id": fmt.Sprint(task.ID), "state": task.State, "backup": up.Backup}})
	if err := u.mark().setOp(ctx, up, func(o *vault.Operation) { o.Description = "upgrade failed: rolling back" }); err != nil {
		u.Log.Warn("could not record the rollback in the operation", "instance", up.InstanceID, "error", err)
	}
	rtask, err := u.redeployBackup(ctx, up)
	r.RollbackTaskID = rtask.ID
	details := map[string]string{"backup": up.Backup, "task_id": fmt.Sprint(rtask.ID), "failed_task_id": fmt.Sprint(task.ID)}
	if err != nil && ctx.Err() != nil && !rtask.Terminal() {
		r.State, r.Reason = report.UpgradeInterrupted, fmt.Sprintf("%s; the wait for its rollback (task %d) was cut: the next fleet "+
			"upgrade rolls it back again", failed, rtask.ID)
		return
	}
	if err != nil {
		r.State, r.Reason = report.UpgradeRollbackFailed, failed+"; the rollback failed too: "+err.Error()
		u.event(ctx, up.InstanceID, vault.Event{Kind: "rollback_failed", Deployment: up.Deployment,
			Message: "the rollback to the manifest of backup " + up.Backup + " failed: " + err.Error(), Details: details})
		u.Log.Error("rollback failed", "instance", up.InstanceID, "backup", up.Backup, "error", err)
	} else {
		r.State, r.Reason = report.UpgradeRolledBack, fmt.Sprintf("%s; the manifest of backup %s was deployed again by task %d", failed, up.Backup, rtask.ID)
		u.event(ctx, up.InstanceID, vault.Event{Kind: "rolled_back", Deployment: up.Deployment,
			Message: fmt.Sprintf("the manifest of backup %s was deployed again by task %d", up.Backup, rtask.ID), Details: details})
		u.Log.Info("upgrade rolled back", "instance", up.InstanceID, "backup", up.Backup, "task", rtask.ID)
	}
	u.mark().unmark(ctx, up)
	u.mark().end(ctx, up, r.State, r.Reason)
}

// redeployBackup deploys the manifest of the upgrade's backup and follows
// its task.
func (u *Upgrader) redeployBackup(ctx context.Context, up *upgrade) (bosh.Task, error) {
	text, ok, err := u.Backups.BackupManifest(ctx, up.InstanceID, up.Backup)
	switch {
	case err != nil:
		return bosh.Task{}, fmt.Errorf("reading backup %s: %w", up.Backup, err)
	case !ok:
		return bosh.Task{}, fmt.Errorf("backup %s holds no manifest", up.Backup)
	}
	ctx, cancel := context.WithTimeout(ctx, u.TaskTimeout)
	defer cancel()
	task, _, err := redeploy.Deploy(ctx, up.target.Deployer, redeploy.Request{Instance: up.InstanceID, Deployment: up.Deployment,
		Manifest: text, What: "the manifest of backup " + up.Backup, Why: "rollback", Poll: u.Poll,
		Operation: "rollback", Guard: operation.Guard{All: true}, // what ran before the upgrade, exactly
		Backups: u.Backups})
	return task, err
}
