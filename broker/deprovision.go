package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
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
	ctx, unlock, err := b.locks.existing(ctx, id, apiresponses.ErrInstanceDoesNotExist)
	if err != nil {
		return none, err
	}
	defer unlock()
	rec, err := b.records.read(ctx, id, apiresponses.ErrInstanceDoesNotExist)
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
	if err := b.bindOps.noneUnderWay(ctx, id, rec); err != nil {
		return none, err
	}
	op := newOperation(opTypeDeprovision, "deprovision in progress: deleting the deployment")
	if err := b.ops.start(ctx, id, rec, op); err != nil {
		return none, err
	}
	b.log.Info("deprovisioning", "instance", id, "deployment", rec.Deployment(id))
	wctx, cancel := detached(ctx, b.opts.DirectorTimeout)
	defer cancel()
	if names := b.settle.errands.preDeleteOf(rec); len(names) > 0 {
		return b.settle.errands.before(wctx, id, rec, op, names)
	}
	return b.remove.deleteDeployment(wctx, id, rec, op, "")
}

// remover deletes an instance's deployment (a deprovision, a retirement's
// second step) and, once it is gone, removes the instance's records.
type remover struct {
	store   Documents
	dirs    *directors
	ops     *recorder
	deploy  *deployer
	history *history
	locks   *locker
	report  reporter
	log     *slog.Logger
}

// deleteDeployment backs up what runs (unless backup names the one its
// caller took), asks the Director to delete the deployment and records its
// task; a deployment that is already gone is cleaned up at once (200).
func (r *remover) deleteDeployment(ctx context.Context, id string, rec *vault.Record, op *vault.Operation, backup string) (domain.DeprovisionServiceSpec, error) {
	async := domain.DeprovisionServiceSpec{IsAsync: true, OperationData: opTypeDeprovision}
	name := rec.Deployment(id)
	dir, err := r.dirs.of(rec)
	if err != nil {
		r.history.ended(ctx, id, op, stateFailed, "deprovision failed: the instance's Director is not configured", 0)
		return domain.DeprovisionServiceSpec{}, r.report.internal("the instance's Director is not configured", err, "instance", id)
	}
	if backup == "" {
		if _, err := r.deploy.backupRunning(ctx, dir, id, name); err != nil {
			r.ops.fail(ctx, id, op, "deprovision failed: what runs could not be backed up; nothing was deleted", err)
			return async, nil
		}
	}
	task, err := r.dirs.createTask(ctx, dir, name, op.ContextID, op.Type, func(ctx context.Context) (bosh.Task, error) {
		return dir.Director.DeleteDeployment(ctx, name, false)
	})
	r.history.accepted(ctx, id, name, op, task.ID, nil) // task.ID is 0 when no task was created
	switch {
	case errors.Is(err, bosh.ErrDeploymentNotFound):
		if err := r.cleanup(ctx, id); err != nil {
			return domain.DeprovisionServiceSpec{}, r.report.internal("could not remove the instance's records", err, "instance", id)
		}
		r.history.ended(ctx, id, op, stateSucceeded, "deprovision succeeded: the deployment did not exist", 0)
		r.log.Info("deprovisioned: the deployment did not exist", "instance", id, "deployment", name)
		return domain.DeprovisionServiceSpec{}, nil
	case err != nil && task.ID == 0:
		r.ops.fail(ctx, id, op, notAccepted(op.Type, err), err)
		return async, nil
	case err != nil:
		r.log.Warn("bosh task created but not read back", "instance", id, "task", task.ID, "error", err)
	}
	r.ops.recordTask(ctx, id, op, task)
	return async, nil
}

// cleanup removes an instance whole: one backup of its record, metadata,
// manifest, secrets and bindings' credentials (so that `blacksmith restore`
// brings it back), then its secrets, then its record. A cleanup that fails
// half-way is tried again on the next last_operation, and its retry keeps
// a backup that holds everything.
func (r *remover) cleanup(ctx context.Context, id string) error {
	backup, err := r.store.RemoveAll(ctx, id)
	if err != nil {
		return fmt.Errorf("removing instance %s: %w", id, err)
	}
	r.log.Info("instance removed; its backup holds its records and secrets", "instance", id, "backup", backup)
	r.locks.removed(id) // the operation's release deletes the instance's lease document
	return nil
}
