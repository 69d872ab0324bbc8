package upgrade

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/redeploy"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// recordOnly records the plan's version of an instance whose rendering is
// what runs: nothing is deployed.
func (u *Upgrader) recordOnly(ctx context.Context, c Candidate, rec *vault.Record, r *report.UpgradeResult) {
	if u.DryRun {
		r.State, r.Reason = report.UpgradeWouldRecord, "the plan's manifest is what runs: would record the version only"
		return
	}
	err := u.exclusive(ctx, func(ctx context.Context) error {
		return operation.Mark(ctx, u.Records, c.InstanceID, rec, func(cur *vault.Record) *vault.Record {
			next := cur.Clone()
			next.MaintenanceVersion = c.To
			return next
		})
	})
	if err != nil {
		r.State, r.Reason = skipOrBusy(err, "recording the version")
		return
	}
	r.State, r.Reason = report.UpgradeUnchanged, "the plan's manifest is what runs: version recorded, nothing deployed"
	u.event(ctx, c.InstanceID, vault.Event{Kind: "upgraded", Deployment: c.Deployment,
		Message: fmt.Sprintf("version %s recorded (was %s): the plan's manifest is what runs, nothing deployed", c.To, orUnknown(c.From)),
		Details: map[string]string{"from": c.From, "to": c.To, "deployed": "false"}})
	if err := u.Journal.End(ctx, c.InstanceID, c.To, report.UpgradeUnchanged, ""); err != nil {
		u.Log.Warn("could not write the upgrade journal", "instance", c.InstanceID, "error", err)
	}
}

// backUp backs up what runs and every record of the instance before its
// deploy: false when it could not (r says why: skipped, a precondition),
// and nothing is deployed.
func backUp(ctx context.Context, b Backups, c Candidate, p *prepared, r *report.UpgradeResult) bool {
	backup, err := p.preview.BackUp(ctx, b)
	switch {
	case errors.Is(err, operation.ErrNoBackup): // backups are off: a failed upgrade would have nothing to be rolled back to
		r.State, r.Reason = report.UpgradeSkipped, "no backup was taken (reconciler.backup.enabled is false): an upgrade is "+
			"rolled back to its backup's manifest, so none is deployed without one"
		return false
	case err != nil:
		r.State, r.Reason = report.UpgradeSkipped, err.Error()+"; nothing deployed"
		return false
	}
	p.backup, r.Backup = backup, backup
	return true
}

// deploy marks its record's operation, journals the upgrade and creates its
// task: nil when it did not get that far.
func (u *Upgrader) deploy(ctx context.Context, c Candidate, p *prepared, r *report.UpgradeResult) *upgrade {
	rec, t, rendered, backup := p.rec, p.target, p.rendered, p.backup
	up := &upgrade{target: t, rendered: rendered, UpgradeEntry: report.UpgradeEntry{InstanceID: c.InstanceID, ContextID: "blacksmith-upgrade-" + rand.Text()[:16],
		Deployment: c.Deployment, Director: rec.Director, ServiceID: c.ServiceID, PlanID: c.PlanID, From: c.From, To: c.To,
		Backup: backup, ManifestSHA256: digest(rendered), Previous: rec.LastOperation, StartedAt: u.Now(), Fleet: u.Fleet},
		preview: p.preview.Details()}
	op := &vault.Operation{Type: "update", State: vault.OperationInProgress, ContextID: up.ContextID,
		Description: fmt.Sprintf("upgrade in progress: to version %s of plan %s", c.To, c.PlanID),
		StartedAt:   up.StartedAt.UTC().Format(time.RFC3339Nano)}
	err := u.exclusive(ctx, func(ctx context.Context) error {
		return operation.Mark(ctx, u.Records, c.InstanceID, rec, func(cur *vault.Record) *vault.Record {
			next := cur.Clone()
			next.LastOperation = op
			return next
		})
	})
	if err != nil {
		r.State, r.Reason = skipOrBusy(err, "marking its operation")
		return nil
	}
	if err := u.Journal.Begin(ctx, up.UpgradeEntry); err != nil {
		u.mark().unmark(ctx, up)
		r.State, r.Reason = report.UpgradeFailed, err.Error()+"; nothing deployed"
		return nil
	}
	// From the deploy on, a stop must not cut what follows: a task made but
	// not read back, or its id not recorded, would run unfollowed.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	task, _, err := redeploy.Deploy(wctx, t.Deployer, redeploy.Request{Instance: c.InstanceID, Deployment: c.Deployment,
		Manifest: rendered, What: "the manifest rendered from plan " + c.PlanID + "'s version " + c.To, ContextID: up.ContextID,
		Preview: p.preview})
	if err != nil && task.ID == 0 {
		u.mark().unmark(wctx, up)
		if bosh.Transient(err) { // the Director is failing: nothing is wrong with the plan
			r.State, r.Reason = report.UpgradeSkipped, "the Director could not be asked to deploy: "+err.Error()+"; nothing deployed"
			return nil
		}
		r.State, r.Reason = report.UpgradeFailed, "the Director did not take the deploy: "+err.Error() // One quarantines it
		return nil
	}
	if err != nil {
		u.Log.Warn("the upgrade's task was created but not read back", "instance", c.InstanceID, "task", task.ID, "error", err)
	}
	up.taskID, r.TaskID = task.ID, task.ID
	if err := u.mark().setOp(wctx, up, func(o *vault.Operation) { o.TaskID = task.ID }); err != nil {
		u.Log.Warn("could not record the upgrade's task; the broker finds it by its context id", "instance", c.InstanceID,
			"task", task.ID, "error", err)
	}
	u.Log.Info("upgrade started", "instance", c.InstanceID, "deployment", c.Deployment, "from", c.From, "to", c.To,
		"task", task.ID, "backup", backup, "canary", r.Canary)
	return up
}
