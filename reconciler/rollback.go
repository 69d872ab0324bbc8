package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/redeploy"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// ErrBusy is returned by Rollback while the broker's operation on the
// instance is in progress.
var ErrBusy = errors.New("an operation is in progress on the instance")

// rollbackPoll is how often a rollback asks about its deploy task.
const rollbackPoll = time.Second

// RollbackResult is what Rollback did.
type RollbackResult struct {
	// InstanceID is the instance.
	InstanceID string `json:"instance_id"`
	// Backup is the backup put back.
	Backup string `json:"backup"`
	// SafetyBackup is the backup of the state before the rollback (to undo it).
	SafetyBackup string `json:"safety_backup,omitempty"`
	// Redeployed says the backup's manifest was deployed first.
	Redeployed bool `json:"redeployed"`
	// TaskID is the Director task of the redeploy.
	TaskID int `json:"task_id,omitempty"`
	// Deployment is the deployment redeployed.
	Deployment string `json:"deployment,omitempty"`
	// Note says what happens next.
	Note string `json:"note"`
	// Bindings says what the restore did with each binding: restored,
	// kept (live), listed (made after the backup) or skipped (unbound).
	Bindings []vault.BindingRestore `json:"bindings,omitempty"`
}

// Rollback puts backup backupID of instance id back (the newest when
// empty). With redeploy it first deploys the backup's manifest to the
// instance's Director through a task and waits for it, so that BOSH runs
// what the records say and the next run has nothing to undo; without, it
// repairs Vault only and the next run re-derives the manifest from BOSH. It
// holds the run lock (no run interleaves) and the instance (Options.Hold:
// no broker operation starts meanwhile; ErrBusy while another holds it),
// refuses while the broker's operation on the instance is in progress,
// and backs the current state up first.
func (m *Manager) Rollback(ctx context.Context, id, backupID string, redeploy bool) (RollbackResult, error) {
	res := RollbackResult{InstanceID: id, Backup: backupID}
	if redeploy && m.parts.Directors.Deployer("") == nil {
		return res, ErrNoDeployer
	}
	release, err := m.holdLease(ctx) // with HA, only the leader changes records (no run of another daemon interleaves)
	if err != nil {
		return res, err
	}
	defer release()
	select {
	case m.runLock <- struct{}{}:
	case <-ctx.Done():
		return res, fmt.Errorf("waiting for the run in progress: %w", ctx.Err())
	}
	defer func() { <-m.runLock }()
	if hold := m.parts.Hold; hold != nil { // no broker operation starts while the backup is put back
		hctx, unhold, err := hold(ctx, id)
		if err != nil {
			return res, fmt.Errorf("%w: taking the instance's hold: %w", ErrBusy, err)
		}
		defer unhold()
		ctx = hctx
	}
	rb := rollback{records: m.stores.records, metadata: m.stores.metadata, backups: m.stores.backups, taker: m.stores.taker,
		restore: m.stores.restore, history: m.stores.history,
		renderer: m.stores.renderer, directors: m.parts.Directors, log: m.log}
	if err := rb.do(ctx, &res, redeploy); err != nil {
		return res, err
	}
	if redeploy {
		m.parts.Cache.Forget(res.Deployment)
	}
	return res, nil
}

// rollback puts an instance's backup back, and, asked to, deploys its
// manifest first (the one redeploy path).
type rollback struct {
	records   recordReader
	metadata  metadataReader
	backups   backupStore
	taker     backupTaker
	restore   restorer
	renderer  ports.Renderer // nil: no rendering
	history   historyStore
	directors *fleet.Directors
	log       *slog.Logger
}

// do makes the rollback res names; deploy deploys the backup's manifest first.
func (rb rollback) do(ctx context.Context, res *RollbackResult, deploy bool) error {
	id := res.InstanceID
	rec, err := rb.records.Record(ctx, id)
	if err != nil {
		return fmt.Errorf("reading the record of %s: %w", id, err)
	}
	if rec.OperationInProgress() {
		return fmt.Errorf("%w: %s %s", ErrBusy, rec.LastOperation.Type, rec.LastOperation.State)
	}
	var dep ports.Deployer
	if deploy {
		if dep = rb.directors.Deployer(rec.Director); dep == nil {
			return fmt.Errorf("%w: the instance's Director %q is not configured", ErrNoDeployer, rec.Director)
		}
	}
	if res.Backup == "" {
		if res.Backup, err = rb.newestBackup(ctx, id); err != nil {
			return err
		}
	}
	var plan *redeployPlan
	if deploy {
		if plan, err = rb.plan(ctx, dep, id, res.Backup, rec); err != nil {
			return err
		}
		res.Deployment = plan.req.Deployment
	}
	if plan != nil { // the deploy backs up what runs first: the safety backup
		if err := rb.redeploy(ctx, plan, res); err != nil {
			return err
		}
	}
	if res.SafetyBackup == "" { // no deploy, or nothing ran to back up: the records are
		if res.SafetyBackup, err = rb.taker.BackupAll(ctx, id); err != nil && !errors.Is(err, vault.ErrNotFound) {
			return fmt.Errorf("backing up the current state first: %w", err)
		}
	}
	rep, err := rb.restore.RestoreReported(ctx, id, res.Backup)
	res.Bindings = rep.Bindings
	if err != nil && !errors.Is(err, vault.ErrEventNotRecorded) {
		return fmt.Errorf("restoring backup %s: %w", res.Backup, err)
	}
	res.Note = "Vault records restored; the next reconciler run re-derives the manifest from BOSH"
	if deploy {
		res.Note = "the backup's manifest is deployed and the Vault records restored: the next reconciler run finds nothing to undo"
	}
	rb.log.Info("instance rolled back", "instance", id, "backup", res.Backup, "redeployed", deploy, "task", res.TaskID)
	return nil
}

// newestBackup is the id of instance id's newest backup.
func (rb rollback) newestBackup(ctx context.Context, id string) (string, error) {
	ids, err := rb.backups.Backups(ctx, id)
	if err != nil {
		return "", err
	}
	if len(ids) == 0 {
		return "", fmt.Errorf("%w: instance %s has no backup", vault.ErrNotFound, id)
	}
	return ids[0], nil
}

// redeployPlan is a rollback's deploy: the Director's Deployer and what to deploy.
type redeployPlan struct {
	dep ports.Deployer
	req redeploy.Request
}

// plan is the deploy of backup backupID with dep, when it is fit: for an
// owned record (the backup's, else rec) the broker's rendering of it, else
// the backup's manifest, unless that is one recorded as drift; it must name
// the deployment of the instance's record.
func (rb rollback) plan(ctx context.Context, dep ports.Deployer, id, backupID string, rec *vault.Record) (*redeployPlan, error) {
	stored, ok, err := rb.backups.BackupManifest(ctx, id, backupID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: backup %s of %s holds no manifest", ErrRollback, backupID, id)
	}
	backupRec, err := rb.backups.BackupRecord(ctx, id, backupID)
	if err != nil {
		return nil, err
	}
	if backupRec == nil {
		backupRec = rec
	}
	md, err := rb.metadata.Metadata(ctx, id)
	if err != nil {
		return nil, err
	}
	events, err := rb.history.Events(ctx, id, 0)
	if err != nil {
		return nil, fmt.Errorf("reading the history of %s (the drifts it records): %w", id, err)
	}
	src := redeploy.Source{Renderer: rb.renderer, Drifts: redeploy.Drifts(md, events)}
	text, what, err := src.Manifest(ctx, id, backupRec, stored, true, "the manifest of backup "+backupID)
	if err != nil {
		return nil, err
	}
	req := redeploy.Request{Instance: id, Deployment: rec.Deployment(id), Manifest: text,
		What: what, Why: "rollback", Poll: rollbackPoll, Operation: "restore", Backups: rb.taker,
		KeepVariables: rb.renderer != nil && backupRec.Owned()} // a rendering keeps what runs; a backup's manifest is deployed as it was
	if err := redeploy.Check(req.Manifest, req.Deployment, req.What); err != nil {
		return nil, err
	}
	return &redeployPlan{dep: dep, req: req}, nil
}

// redeploy deploys the backup's manifest and waits for its task; the
// instance's history says how it ended.
func (rb rollback) redeploy(ctx context.Context, p *redeployPlan, res *RollbackResult) error {
	task, preview, err := redeploy.Deploy(ctx, p.dep, p.req)
	res.TaskID = task.ID
	if preview != nil {
		res.SafetyBackup = preview.Backup
	}
	if err != nil && !task.Terminal() {
		return err // refused, not sent, or not followed to its end
	}
	details := map[string]string{"backup": res.Backup, "task_id": fmt.Sprint(task.ID), "safety_backup": res.SafetyBackup}
	if err != nil {
		rb.appendEvent(ctx, res.InstanceID, vault.Event{Kind: "redeploy_failed", Actor: "operator", Deployment: res.Deployment,
			Message: fmt.Sprintf("task %d ended %s: %s; the Vault records were not changed", task.ID, task.State, task.Result),
			Details: details})
		return fmt.Errorf("%w; the Vault records were not changed", err)
	}
	res.Redeployed = true
	rb.appendEvent(ctx, res.InstanceID, vault.Event{Kind: "redeployed", Actor: "operator", Deployment: res.Deployment,
		Message: fmt.Sprintf("manifest of backup %s deployed by task %d", res.Backup, task.ID), Details: details})
	return nil
}

// appendEvent records a history event; a failure is logged only.
func (rb rollback) appendEvent(ctx context.Context, id string, e vault.Event) {
	if err := rb.history.AppendEvent(ctx, id, e); err != nil {
		rb.log.Warn("could not record a history event", "instance", id, "kind", e.Kind, "error", err)
	}
}
