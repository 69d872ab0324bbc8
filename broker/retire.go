package broker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The operations of an orphan deployment's retirement, besides its
// deprovision: its VMs stopped (the first step) or started again (the
// platform listed it again before its deletion was due).
const (
	opTypeStop  = "stop"
	opTypeStart = "start"
)

// ErrNotRetired is matched by the errors of StopOrphanDeployment,
// StartRetired and DeleteOrphanDeployment that refuse the instance as it is now (not a failure of Vault or the
// Director): gone, not the broker's, orphaned, busy, no backup possible.
// Those errors also have a method Refusal() bool, for callers that do not
// import this package.
var ErrNotRetired = errors.New("not deleted")

// refusal is a refusal of a retirement's step.
type refusal struct{ msg string }

func (r refusal) Error() string            { return r.msg }
func (refusal) Refusal() bool              { return true }
func (refusal) Is(target error) bool       { return target == ErrNotRetired }
func refuse(format string, a ...any) error { return refusal{fmt.Sprintf(format, a...)} }

// DeleteOrphanDeployment is the second step of an orphan deployment's
// retirement: it deletes the deployment of an instance the platform does
// not have, as a deprovision would, only once its first step is done (its
// VMs stopped by StopOrphanDeployment, that stop succeeded, its deletion
// due): under the instance's hold, its record read again and refused
// unless the broker owns it (not adopted and unconfirmed), its deployment
// is not flagged gone and no operation is in progress; every record and
// secret backed up first
// (refused without a backup: reconciler.backup.enabled false); a
// deprovision operation recorded (context id vault.RetireContextPrefix...)
// with reason as its description; the deployment deleted through a task.
// The records go once the task is done, when the reconciler settles the
// operation (SettleOperation), exactly as last_operation would. It answers
// the backup and the task (0 when none was started: the deployment was
// already gone and the records went at once, or the Director refused, and
// the operation failed).
func (b *Broker) DeleteOrphanDeployment(ctx context.Context, id, reason string) (backup string, task int, err error) {
	return b.retire.deleteOrphan(ctx, id, reason)
}

// retirer retires orphan deployments in two steps (their VMs stopped, then
// their deployment deleted) and starts one the platform lists again.
type retirer struct {
	store   Records
	locks   *locker
	dirs    *directors
	ops     *recorder
	deploy  *deployer
	remove  *remover
	history *history
	now     func() time.Time // Options.Now
	timeout time.Duration    // Options.DirectorTimeout
	log     *slog.Logger
}

// deleteOrphan is DeleteOrphanDeployment.
func (r *retirer) deleteOrphan(ctx context.Context, id, reason string) (backup string, task int, err error) {
	ctx, unlock, err := r.locks.hold(ctx, id)
	if err != nil {
		return "", 0, fmt.Errorf("taking the instance's hold: %w", err)
	}
	defer unlock()
	rec, err := r.retirable(ctx, id, "not deleted")
	switch {
	case err != nil:
		return "", 0, err
	case rec.Retiring == nil:
		return "", 0, refuse("not deleted: its VMs were not stopped first (the retirement's first step)")
	case !stopSucceeded(rec):
		return "", 0, refuse("not deleted: the stop of its VMs did not succeed")
	case !rec.Retiring.Due(r.now()):
		return "", 0, refuse("not deleted: its deletion is due only after %s", rec.Retiring.DeleteAfter)
	}
	dir, err := r.dirs.of(rec)
	if err != nil {
		return "", 0, refuse("not deleted: its Director is not configured")
	}
	backup, err = r.deploy.backupRunning(ctx, dir, id, rec.Deployment(id))
	switch {
	case err != nil:
		return "", 0, fmt.Errorf("backing it up: %w", err)
	case backup == "":
		return "", 0, refuse("not deleted: backups are disabled (reconciler.backup.enabled), and nothing is deleted without one")
	}
	op := newOperation(opTypeDeprovision, "deprovision by the reconciler: "+reason)
	op.ContextID = vault.RetireContextPrefix + rand.Text()
	if err := r.ops.start(ctx, id, rec, op); err != nil {
		return backup, 0, fmt.Errorf("recording the deprovision: %w", err)
	}
	r.log.Warn("deleting an orphan deployment", "instance", id, "deployment", rec.Deployment(id), "backup", backup, "reason", reason)
	wctx, cancel := detached(ctx, r.timeout)
	defer cancel()
	if _, err := r.remove.deleteDeployment(wctx, id, rec, op, backup); err != nil {
		return backup, 0, err
	}
	after, err := r.store.Record(wctx, id)
	switch {
	case err != nil:
		return backup, 0, fmt.Errorf("reading its record back: %w", err)
	case after == nil: // the deployment was gone: the records went at once
		return backup, 0, nil
	case after.LastOperation != nil && after.LastOperation.ContextID == op.ContextID && after.LastOperation.State == stateFailed:
		return backup, 0, fmt.Errorf("the Director did not delete it: %s", after.LastOperation.Description)
	case after.LastOperation != nil && after.LastOperation.ContextID == op.ContextID:
		return backup, after.LastOperation.TaskID, nil
	}
	return backup, 0, nil
}

// StopOrphanDeployment is the first step of an orphan deployment's
// retirement: under the instance's hold, its record read again and refused
// as DeleteOrphanDeployment refuses it (not the broker's, orphaned, busy,
// retiring already and stopped); what runs backed up (refused without a
// backup); a stop operation and the retirement (vault.Retirement: its
// deletion due at deleteAfter) recorded at once by check-and-set; then
// every instance of the deployment stopped hard (bosh stop --hard: VMs
// deleted, persistent disks kept) through a task under the operation's
// context id, which the reconciler's next run settles. A retirement whose
// stop failed is stopped again, its due time kept. It answers the backup
// and the task (0 when the Director refused it: the operation failed).
func (b *Broker) StopOrphanDeployment(ctx context.Context, id, reason string, deleteAfter time.Time) (backup string, task int, err error) {
	return b.retire.stopOrphan(ctx, id, reason, deleteAfter)
}

// stopOrphan is StopOrphanDeployment.
func (r *retirer) stopOrphan(ctx context.Context, id, reason string, deleteAfter time.Time) (backup string, task int, err error) {
	ctx, unlock, err := r.locks.hold(ctx, id)
	if err != nil {
		return "", 0, fmt.Errorf("taking the instance's hold: %w", err)
	}
	defer unlock()
	rec, err := r.retirable(ctx, id, "not stopped")
	switch {
	case err != nil:
		return "", 0, err
	case rec.Retiring != nil && stopSucceeded(rec):
		return "", 0, refuse("not stopped: its VMs are stopped already")
	}
	dir, err := r.dirs.of(rec)
	if err != nil {
		return "", 0, refuse("not stopped: its Director is not configured")
	}
	name := rec.Deployment(id)
	backup, err = r.deploy.backupRunning(ctx, dir, id, name)
	switch {
	case err != nil:
		return "", 0, fmt.Errorf("backing it up: %w", err)
	case backup == "":
		return "", 0, refuse("not stopped: backups are disabled (reconciler.backup.enabled), and nothing is retired without one")
	}
	ret := rec.Retiring
	if ret == nil || rec.LastOperation == nil || rec.LastOperation.Type != opTypeStop { // else a stop that failed, tried again
		ret = &vault.Retirement{StoppedAt: r.now().UTC().Format(time.RFC3339),
			DeleteAfter: deleteAfter.UTC().Format(time.RFC3339), Backup: backup, Reason: reason}
	}
	op := newOperation(opTypeStop, "stop by the reconciler, the first step of a retirement: "+reason)
	op.ContextID = vault.RetireContextPrefix + rand.Text()
	err = operation.Mark(ctx, r.store, id, rec, func(cur *vault.Record) *vault.Record {
		next := cur.Clone()
		next.LastOperation, next.Retiring = op, ret
		return next
	})
	if err != nil {
		return backup, 0, fmt.Errorf("recording the stop: %w", err)
	}
	r.log.Warn("stopping an orphan deployment's VMs (retirement, step one)", "instance", id, "deployment", name,
		"backup", backup, "delete_after", ret.DeleteAfter, "reason", reason)
	return backup, r.changeState(ctx, dir, id, name, op, bosh.StateDetached,
		map[string]string{"backup": backup, "delete_after": ret.DeleteAfter}), nil
}

// retirable reads the instance's record under its hold and refuses it, as
// a retirement's step no (e.g. "not deleted"), unless the broker owns it,
// its deployment is not flagged gone and no operation is in progress.
func (r *retirer) retirable(ctx context.Context, id, no string) (*vault.Record, error) {
	rec, err := r.store.Record(ctx, id)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading its record: %w", err)
	case rec == nil:
		return nil, refuse("%s: it has no record any more", no)
	case !rec.Owned():
		return nil, refuse("%s: it was adopted from a Director and an operator has not confirmed it: the broker did not deploy it", no)
	case rec.Orphaned:
		return nil, refuse("%s: its deployment is gone (an orphan)", no)
	case rec.OperationInProgress():
		return nil, refuse("%s: a %s is in progress", no, rec.LastOperation.Type)
	}
	return rec, nil
}

// stopSucceeded says whether the record's last operation is a retirement's
// stop that succeeded.
func stopSucceeded(rec *vault.Record) bool {
	op := rec.LastOperation
	return op != nil && op.Type == opTypeStop && op.State == stateSucceeded
}

// StartRetired ends the retirement of an instance whose VMs the reconciler
// stopped, because the platform lists it again: under its hold, a start
// operation recorded (refused while another is in progress, or when the
// instance is not retiring), every instance of the deployment started
// through a task; the retirement ends when that task succeeds (the
// reconciler's next run settles it), and a failed start is tried again by
// the next run that finds the platform listing it. It answers the task (0
// when the Director refused it).
func (b *Broker) StartRetired(ctx context.Context, id, reason string) (task int, err error) {
	return b.retire.startRetired(ctx, id, reason)
}

// startRetired is StartRetired.
func (r *retirer) startRetired(ctx context.Context, id, reason string) (task int, err error) {
	ctx, unlock, err := r.locks.hold(ctx, id)
	if err != nil {
		return 0, fmt.Errorf("taking the instance's hold: %w", err)
	}
	defer unlock()
	rec, err := r.store.Record(ctx, id)
	switch {
	case err != nil:
		return 0, fmt.Errorf("reading its record: %w", err)
	case rec == nil:
		return 0, refuse("not started: it has no record any more")
	case rec.Retiring == nil:
		return 0, refuse("not started: it is not retiring")
	case rec.OperationInProgress():
		return 0, refuse("not started: a %s is in progress", rec.LastOperation.Type)
	}
	dir, err := r.dirs.of(rec)
	if err != nil {
		return 0, refuse("not started: its Director is not configured")
	}
	op := newOperation(opTypeStart, "start by the reconciler, ending a retirement: "+reason)
	op.ContextID = vault.RetireContextPrefix + rand.Text()
	if err := r.ops.start(ctx, id, rec, op); err != nil {
		return 0, fmt.Errorf("recording the start: %w", err)
	}
	name := rec.Deployment(id)
	r.log.Warn("starting a retiring deployment again: the platform lists the instance", "instance", id, "deployment", name, "reason", reason)
	return r.changeState(ctx, dir, id, name, op, bosh.StateStarted, nil), nil
}

// changeState asks the Director to bring the deployment's instances to
// state under op's context id and records the task (0, and op failed, when
// none was created).
func (r *retirer) changeState(ctx context.Context, dir NamedDirector, id, name string, op *vault.Operation, state string, details map[string]string) int {
	wctx, cancel := detached(ctx, r.timeout)
	defer cancel()
	task, err := r.dirs.createTask(wctx, dir, name, op.ContextID, op.Type, func(ctx context.Context) (bosh.Task, error) {
		return dir.Director.ChangeState(ctx, name, state)
	})
	r.history.accepted(wctx, id, name, op, task.ID, details)
	switch {
	case err != nil && task.ID == 0:
		r.ops.fail(wctx, id, op, notAccepted(op.Type, err), err)
		return 0
	case err != nil:
		r.log.Warn("bosh task created but not read back", "instance", id, "task", task.ID, "error", err)
	}
	r.ops.recordTask(wctx, id, op, task)
	return task.ID
}
