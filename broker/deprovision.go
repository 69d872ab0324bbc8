package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Deprovision answers DELETE /v2/service_instances/:id. It records the
// deprovision, asks the Director to delete the deployment and answers 202;
// last_operation removes the record once the task is done. When the
// deployment does not exist the records go at once and the answer is 200.
// An unknown instance is 410.
func (b *Broker) Deprovision(ctx context.Context, id string, d domain.DeprovisionDetails, async bool) (domain.DeprovisionServiceSpec, error) {
	var none domain.DeprovisionServiceSpec
	if !async {
		return none, apiresponses.ErrAsyncRequired
	}
	ctx, unlock, err := b.lockExisting(ctx, id, apiresponses.ErrInstanceDoesNotExist)
	if err != nil {
		return none, err
	}
	defer unlock()
	rec, err := b.readRecord(ctx, id, apiresponses.ErrInstanceDoesNotExist)
	if err != nil {
		return none, err
	}
	if rec.Adopted {
		return none, errAwaitsAdoption
	}
	if err := judgeIDs(rec, b.opts.Catalog, d.ServiceID, d.PlanID); err != nil {
		return none, err
	}
	if op := rec.LastOperation; op != nil && op.State == stateInProgress {
		if op.Type == opTypeDeprovision {
			return domain.DeprovisionServiceSpec{IsAsync: true, OperationData: opTypeDeprovision}, nil
		}
		return none, concurrency(op.Type)
	}
	if err := b.noBindingUnderWay(ctx, id, rec); err != nil {
		return none, err
	}
	op := newOperation(opTypeDeprovision, "deprovision in progress: deleting the deployment")
	if err := b.startOp(ctx, id, rec, op); err != nil {
		return none, err
	}
	b.log.Info("deprovisioning", "instance", id, "deployment", rec.Deployment(id))
	wctx, cancel := b.detached(ctx)
	defer cancel()
	return b.deleteDeployment(wctx, id, rec, op, "")
}

// deleteDeployment backs up what runs (unless backup names the one its
// caller took), asks the Director to delete the deployment and records its
// task; a deployment that is already gone is cleaned up at once (200).
func (b *Broker) deleteDeployment(ctx context.Context, id string, rec *vault.Record, op *vault.Operation, backup string) (domain.DeprovisionServiceSpec, error) {
	async := domain.DeprovisionServiceSpec{IsAsync: true, OperationData: opTypeDeprovision}
	name := rec.Deployment(id)
	dir, err := b.directorOf(rec)
	if err != nil {
		b.ended(ctx, id, op, stateFailed, "deprovision failed: the instance's Director is not configured", 0)
		return domain.DeprovisionServiceSpec{}, b.internal("the instance's Director is not configured", err, "instance", id)
	}
	if backup == "" {
		if _, err := b.backupRunning(ctx, dir, id, name); err != nil {
			b.failOp(ctx, id, op, "deprovision failed: what runs could not be backed up; nothing was deleted", err)
			return async, nil
		}
	}
	task, err := b.createTask(ctx, dir, name, op.ContextID, op.Type, func(ctx context.Context) (bosh.Task, error) {
		return dir.Director.DeleteDeployment(ctx, name, false)
	})
	b.accepted(ctx, id, name, op, task.ID, nil) // task.ID is 0 when no task was created
	switch {
	case errors.Is(err, bosh.ErrDeploymentNotFound):
		if err := b.cleanup(ctx, id); err != nil {
			return domain.DeprovisionServiceSpec{}, b.internal("could not remove the instance's records", err, "instance", id)
		}
		b.ended(ctx, id, op, stateSucceeded, "deprovision succeeded: the deployment did not exist", 0)
		b.log.Info("deprovisioned: the deployment did not exist", "instance", id, "deployment", name)
		return domain.DeprovisionServiceSpec{}, nil
	case err != nil && task.ID == 0:
		b.failOp(ctx, id, op, notAccepted(op.Type, err), err)
		return async, nil
	case err != nil:
		b.log.Warn("bosh task created but not read back", "instance", id, "task", task.ID, "error", err)
	}
	b.recordTask(ctx, id, op, task)
	return async, nil
}

// startOp records op as rec's last operation, provided that the record did
// not change since it was read.
func (b *Broker) startOp(ctx context.Context, id string, rec *vault.Record, op *vault.Operation) error {
	err := operation.Mark(ctx, b.opts.Store, id, rec, func(cur *vault.Record) *vault.Record {
		next := cur.Clone()
		next.LastOperation = op
		return next
	})
	switch {
	case errors.Is(err, operation.ErrRaced):
		return concurrency("another operation")
	case err != nil:
		return b.internal("could not write the instance's record", err, "instance", id)
	}
	return nil
}

// cleanup removes an instance whole: one backup of its record, metadata,
// manifest, secrets and bindings' credentials (so that `blacksmith restore`
// brings it back), then its secrets, then its record. A cleanup that fails
// half-way is tried again on the next last_operation, and its retry keeps
// a backup that holds everything.
func (b *Broker) cleanup(ctx context.Context, id string) error {
	backup, err := b.opts.Store.RemoveAll(ctx, id)
	if err != nil {
		return fmt.Errorf("removing instance %s: %w", id, err)
	}
	b.log.Info("instance removed; its backup holds its records and secrets", "instance", id, "backup", backup)
	if b.opts.SharedLimits != nil {
		b.gone.Store(id, true) // the operation's release deletes the instance's lease document
	}
	return nil
}

// backupRunning backs the instance up with the manifest its Director runs
// (every record and secret too), before a delete: Vault's manifest when
// the deployment is gone or cannot be read. "" when backups are off.
func (b *Broker) backupRunning(ctx context.Context, dir NamedDirector, id, name string) (string, error) {
	running, err := retried{b: b, d: dir}.Manifest(ctx, name)
	switch {
	case err == nil:
		return b.opts.Store.BackupRunning(ctx, id, running)
	case errors.Is(err, bosh.ErrDeploymentNotFound):
	default:
		b.log.Warn("could not read what runs before deleting it: Vault's manifest is backed up", "instance", id, "error", err)
	}
	backup, err := b.opts.Store.BackupAll(ctx, id)
	if errors.Is(err, vault.ErrNotFound) {
		return "", nil
	}
	return backup, err
}
