package broker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// LastOperation types and states, as recorded in Vault and answered to the platform.
const (
	opTypeProvision   = "provision"
	opTypeUpdate      = "update"
	opTypeDeprovision = "deprovision"

	stateInProgress = vault.OperationInProgress
	stateSucceeded  = vault.OperationSucceeded
	stateFailed     = vault.OperationFailed
)

// newOperation starts an operation of the given type. Its context id tags
// the BOSH task it creates, so that the task can be found again when its id
// was never recorded.
func newOperation(opType, description string) *vault.Operation {
	return &vault.Operation{
		Type:        opType,
		State:       stateInProgress,
		Description: description,
		StartedAt:   time.Now().UTC().Format(time.RFC3339Nano),
		ContextID:   "blacksmith-" + opType + "-" + rand.Text(),
	}
}

// recorder records an instance's operation on its record: started, its
// task, its failure.
type recorder struct {
	store   Records
	dirs    *directors
	history *history
	report  reporter
	log     *slog.Logger
}

// start records op as rec's last operation, provided that the record did
// not change since it was read.
func (r *recorder) start(ctx context.Context, id string, rec *vault.Record, op *vault.Operation) error {
	err := operation.Mark(ctx, r.store, id, rec, func(cur *vault.Record) *vault.Record {
		next := cur.Clone()
		next.LastOperation = op
		return next
	})
	switch {
	case errors.Is(err, operation.ErrRaced):
		return concurrency("another operation")
	case err != nil:
		return r.report.internal("could not write the instance's record", err, "instance", id)
	}
	return nil
}

// set changes the record's LastOperation with f, provided that it still
// is the operation with contextID (a later operation is left alone).
func (r *recorder) set(ctx context.Context, id, contextID string, f func(*vault.Operation)) error {
	return r.setRecord(ctx, id, contextID, func(rec *vault.Record) { f(rec.LastOperation) })
}

// setRecord changes the record with f (its operation and what it
// applies), provided that its LastOperation still is the one with
// contextID.
func (r *recorder) setRecord(ctx context.Context, id, contextID string, f func(*vault.Record)) error {
	if err := operation.ChangeOp(ctx, r.store, id, contextID, f); err != nil {
		return fmt.Errorf("updating the last operation of instance %s: %w", id, err)
	}
	return nil
}

// fail records the operation as failed (see failure), logging a failure
// to write it: the record then stays in progress, which last_operation
// reports failed once LostTaskGrace has passed (or at once when it has a
// task id the Director does not know).
func (r *recorder) fail(ctx context.Context, id string, op *vault.Operation, userMsg string, err error) {
	if werr := r.failure(ctx, id, op, userMsg, err); werr != nil {
		r.log.Error("could not record a failed operation", "instance", id, "operation", op.Type, "error", werr)
	}
}

// failure logs err for the operator and records the operation as failed
// with the user's description (in its record and its history). It returns
// the error of the record's write.
func (r *recorder) failure(ctx context.Context, id string, op *vault.Operation, userMsg string, err error) error {
	r.log.Error(userMsg, "instance", id, "operation", op.Type, "error", err)
	r.history.ended(ctx, id, op, stateFailed, userMsg, op.TaskID)
	return r.set(ctx, id, op.ContextID, func(o *vault.Operation) {
		o.State, o.Description, o.Pending = stateFailed, userMsg, nil // nothing of a failed operation is applied
	})
}

// startTask runs the Director call that creates op's task on d (with op's
// context id, asked again after transient faults: directors.createTask),
// records the task's id and returns it; a call that fails is recorded as
// op's failure, naming the Director when it kept failing (and 0 returned).
func (r *recorder) startTask(ctx context.Context, id, deployment string, op *vault.Operation, d NamedDirector, call func(context.Context) (bosh.Task, error)) int {
	task, err := r.dirs.createTask(ctx, d, deployment, op.ContextID, op.Type, call)
	switch {
	case err != nil && task.ID == 0:
		r.fail(ctx, id, op, notAccepted(op.Type, err), err)
		return 0
	case err != nil:
		// The Director created the task but could not be asked about it.
		r.log.Warn("bosh task created but not read back", "instance", id, "task", task.ID, "error", err)
	}
	r.recordTask(ctx, id, op, task)
	return task.ID
}

// notAccepted is what the platform user is told of an operation the
// Director did not take: which Director, when it kept failing.
func notAccepted(opType string, err error) string {
	var de *directorError
	if errors.As(err, &de) {
		return fmt.Sprintf("%s failed: the BOSH Director %q is failing (%d attempts); please try again later", opType, de.director, de.attempts)
	}
	return opType + " failed: the BOSH Director did not accept it; please try again"
}

// recordTask records the id of op's task.
func (r *recorder) recordTask(ctx context.Context, id string, op *vault.Operation, task bosh.Task) {
	r.log.Info("bosh task started", "instance", id, "operation", op.Type, "task", task.ID)
	err := r.set(ctx, id, op.ContextID, func(o *vault.Operation) {
		o.TaskID = task.ID
		o.Description = taskDescription(op.Type, task)
	})
	if err != nil {
		// last_operation finds the task by its context id.
		r.log.Error("could not record the bosh task", "instance", id, "task", task.ID, "error", err)
	}
}

// taskDescription is what the platform user is told about a task.
func taskDescription(opType string, t bosh.Task) string {
	switch {
	case t.State == bosh.TaskDone:
		return fmt.Sprintf("%s succeeded (BOSH task %d)", opType, t.ID)
	case t.Terminal():
		desc := fmt.Sprintf("%s failed: BOSH task %d ended %s", opType, t.ID, t.State)
		if t.Result != "" {
			desc += ": " + textcut.Marked(t.Result, 300, "...")
		}
		return desc
	case t.State == "":
		return fmt.Sprintf("%s in progress (BOSH task %d)", opType, t.ID)
	default:
		return fmt.Sprintf("%s in progress (BOSH task %d is %s)", opType, t.ID, t.State)
	}
}
