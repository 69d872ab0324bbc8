package broker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// ErrNotRetired is matched by the errors of DeleteOrphanDeployment that
// refuse the instance as it is now (not a failure of Vault or the
// Director): gone, not the broker's, orphaned, busy, no backup possible.
// Those errors also have a method Refusal() bool, for callers that do not
// import this package.
var ErrNotRetired = errors.New("not deleted")

// refusal is a refusal of DeleteOrphanDeployment.
type refusal struct{ msg string }

func (r refusal) Error() string            { return r.msg }
func (refusal) Refusal() bool              { return true }
func (refusal) Is(target error) bool       { return target == ErrNotRetired }
func refuse(format string, a ...any) error { return refusal{fmt.Sprintf(format, a...)} }

// DeleteOrphanDeployment deletes the deployment of an instance the platform
// does not have (an orphan deployment), as a deprovision would: under the
// instance's hold, its record read again and refused unless the broker owns
// it (not adopted and unconfirmed), its deployment is not flagged gone and
// no operation is in progress; every record and secret backed up first
// (refused without a backup: reconciler.backup.enabled false); a
// deprovision operation recorded (context id vault.RetireContextPrefix...)
// with reason as its description; the deployment deleted through a task.
// The records go once the task is done, when the reconciler settles the
// operation (SettleOperation), exactly as last_operation would. It answers
// the backup and the task (0 when none was started: the deployment was
// already gone and the records went at once, or the Director refused, and
// the operation failed).
func (b *Broker) DeleteOrphanDeployment(ctx context.Context, id, reason string) (backup string, task int, err error) {
	ctx, unlock, err := b.holdInstance(ctx, id)
	if err != nil {
		return "", 0, fmt.Errorf("taking the instance's hold: %w", err)
	}
	defer unlock()
	rec, err := b.opts.Store.Record(ctx, id)
	switch {
	case err != nil:
		return "", 0, fmt.Errorf("reading its record: %w", err)
	case rec == nil:
		return "", 0, refuse("not deleted: it has no record any more")
	case !rec.Owned():
		return "", 0, refuse("not deleted: it was adopted from a Director and an operator has not confirmed it: the broker did not deploy it")
	case rec.Orphaned:
		return "", 0, refuse("not deleted: its deployment is gone (an orphan)")
	case rec.OperationInProgress():
		return "", 0, refuse("not deleted: a %s is in progress", rec.LastOperation.Type)
	}
	dir, err := b.directorOf(rec)
	if err != nil {
		return "", 0, refuse("not deleted: its Director is not configured")
	}
	backup, err = b.backupRunning(ctx, dir, id, rec.Deployment(id))
	switch {
	case err != nil:
		return "", 0, fmt.Errorf("backing it up: %w", err)
	case backup == "":
		return "", 0, refuse("not deleted: backups are disabled (reconciler.backup.enabled), and nothing is deleted without one")
	}
	op := newOperation(opTypeDeprovision, "deprovision by the reconciler: "+reason)
	op.ContextID = vault.RetireContextPrefix + rand.Text()
	if err := b.startOp(ctx, id, rec, op); err != nil {
		return backup, 0, fmt.Errorf("recording the deprovision: %w", err)
	}
	b.log.Warn("deleting an orphan deployment", "instance", id, "deployment", rec.Deployment(id), "backup", backup, "reason", reason)
	wctx, cancel := b.detached(ctx)
	defer cancel()
	if _, err := b.deleteDeployment(wctx, id, rec, op, backup); err != nil {
		return backup, 0, err
	}
	after, err := b.opts.Store.Record(wctx, id)
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
