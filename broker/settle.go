package broker

import (
	"context"
	"errors"
	"fmt"
)

// OperationGone is the state SettleOperation answers for an instance
// without a record: it never existed or its deprovision completed.
const OperationGone = "gone"

// ErrDirectorUnavailable is matched by the error of SettleOperation when the
// BOSH Director could not be asked about the operation's task; the error
// wraps the Director's error too.
var ErrDirectorUnavailable = errors.New("the BOSH Director could not be asked about the operation's task")

// SettleOperation follows the instance's operation in progress to the
// Director, as a poll of last_operation would, under the instance's lock,
// and records the outcome once its task has ended (succeeded, failed, or
// failed with a reason when the Director has no task for it). It answers
// the state ("in progress", "succeeded", "failed", or OperationGone when the
// record no longer exists, e.g. a deprovision that completed) and the
// description the platform will see. The call that completes a deprovision
// answers "succeeded" (the record is then gone), as last_operation does.
//
// The state and description are answered even with an error when the
// operation could not be taken further now and stays in progress: when the
// Director could not be reached, the error matches ErrDirectorUnavailable
// and wraps the Director's error; when a deprovisioned instance's records
// could not be removed, or an outcome found could not be recorded ("failed"
// for a task the Director does not have), it is Vault's error. Only when
// the record could not be read, or a finished task's outcome not written,
// are the state and description empty; so are they when, with
// SharedLimits, another daemon held the instance's lease for all of
// Options.InstanceLeaseWait (the error matches ErrInstanceBusy: that daemon
// is taking an operation of the instance further) or the lease could not be
// taken (Vault's error).
func (b *Broker) SettleOperation(ctx context.Context, id string) (state, description string, err error) {
	ctx, unlock, err := b.locks.hold(ctx, id)
	if err != nil {
		return "", "", fmt.Errorf("settling the operation of instance %s: %w", id, err)
	}
	defer unlock()
	rec, err := b.opts.Store.Record(ctx, id)
	switch {
	case err != nil:
		return "", "", fmt.Errorf("settling the operation of instance %s: reading its record: %w", id, err)
	case rec == nil:
		return OperationGone, "the instance does not exist", nil
	}
	p, err := b.settle.follow(ctx, id, rec)
	if err != nil {
		return "", "", fmt.Errorf("settling the operation of instance %s: recording its outcome: %w", id, err)
	}
	if p.stalled != nil {
		err = fmt.Errorf("settling the operation of instance %s: %w", id, p.stalled)
	}
	return string(p.answer.State), p.answer.Description, err
}
