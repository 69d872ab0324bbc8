package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// LastOperation answers GET /v2/service_instances/:id/last_operation from the
// instance's record and, while its operation is in progress, from the
// Director's task, recording the outcome once the task has ended. A
// deprovision that succeeded removes the record (and the instance's
// secrets); the instance then answers succeeded for a while, 410 Gone
// later (see settler.deleted), and one that never existed 404 (the spec, 2.16 on).
// An answer in progress comes with Retry-After, a failed update's or
// deprovision's with instance_usable (and an update's update_repeatable):
// see hint.
func (b *Broker) LastOperation(ctx context.Context, id string, _ domain.PollDetails) (domain.LastOperation, error) {
	rec, ans, err := b.lastOperation(ctx, id)
	if err == nil {
		b.hint(ctx, id, rec, ans)
	}
	return ans, err
}

// lastOperation is LastOperation's answer, with the record it is about
// (nil for an instance without one).
func (b *Broker) lastOperation(ctx context.Context, id string) (*vault.Record, domain.LastOperation, error) {
	rec, err := b.records.read(ctx, id, nil)
	if err != nil {
		return nil, domain.LastOperation{}, err
	}
	if rec == nil {
		ans, err := b.settle.deleted(ctx, id)
		return nil, ans, err
	}
	if op := rec.LastOperation; op == nil || op.State != stateInProgress {
		return rec, answer(rec.LastOperation), nil
	}
	if running, ok := b.settle.pollRunning(ctx, rec); ok {
		return rec, running, nil
	}
	ctx, unlock, err := b.locks.hold(ctx, id)
	switch {
	case errors.Is(err, ErrInstanceBusy): // another broker is taking it further: answer the record
		rec, err := b.records.read(ctx, id, apiresponses.ErrInstanceDoesNotExist)
		if err != nil {
			return nil, domain.LastOperation{}, err
		}
		return rec, answer(rec.LastOperation), nil
	case err != nil:
		return nil, domain.LastOperation{}, b.report.internal("could not take the instance's lease", err, "instance", id)
	}
	defer unlock()
	ans, err := b.settle.poll(ctx, id)
	return rec, ans, err
}

// settler takes an instance's operation in progress further from its
// Director's task (last_operation, SettleOperation), recording its outcome
// once the task has ended.
type settler struct {
	store   Store
	records records
	dirs    *directors
	ops     *recorder
	deploy  *deployer
	remove  *remover
	history *history
	// shared is whether Options.SharedLimits is set: a poll of a running
	// task then answers without the lease (pollRunning).
	shared          bool
	lostTaskGrace   time.Duration // Options.LostTaskGrace
	rememberDeleted time.Duration // Options.RememberDeleted
	errands         *postDeploy
	report          reporter
	log             *slog.Logger
}

// deleted answers for an instance without a record, from its history: a
// deprovision removed it less than RememberDeleted ago: "succeeded" (the
// spec: SHOULD NOT forget an operation's state at once); longer ago: 410
// Gone (an asynchronous delete that finished: the platform forgets it);
// never: 404 (2.16 on: the instance does not exist).
func (s *settler) deleted(ctx context.Context, id string) (domain.LastOperation, error) {
	at, deleted, err := s.store.LastEvent(ctx, id, opTypeDeprovision)
	switch {
	case err != nil:
		return domain.LastOperation{}, s.report.internal("could not read the instance's history", err, "instance", id)
	case !deleted:
		return domain.LastOperation{}, errNotFound
	case time.Since(at) < s.rememberDeleted:
		return domain.LastOperation{State: domain.Succeeded, Description: "deprovision succeeded: the instance is gone"}, nil
	}
	return domain.LastOperation{}, apiresponses.ErrInstanceDoesNotExist
}

// answer is what the platform is told about a recorded operation.
func answer(op *vault.Operation) domain.LastOperation {
	if op == nil {
		return domain.LastOperation{State: domain.Succeeded, Description: "the instance exists"}
	}
	return domain.LastOperation{State: domain.LastOperationState(op.State), Description: op.Description}
}

// poll follows an operation in progress to the Director (under the
// instance's lock) for the platform: what went wrong is logged, not answered.
func (s *settler) poll(ctx context.Context, id string) (domain.LastOperation, error) {
	rec, err := s.records.read(ctx, id, apiresponses.ErrInstanceDoesNotExist)
	if err != nil {
		return domain.LastOperation{}, err
	}
	p, err := s.follow(ctx, id, rec)
	if err != nil {
		return domain.LastOperation{}, s.report.internal("could not record the operation's outcome", err, "instance", id)
	}
	switch {
	case errors.Is(p.stalled, ErrDirectorUnavailable):
		s.log.Warn("could not ask the director about a task", "instance", id, "error", p.stalled)
	case p.stalled != nil:
		s.log.Error("could not take the operation further", "instance", id, "error", p.stalled)
	}
	return p.answer, nil
}

// progress is what following an operation found.
type progress struct {
	// answer is what the platform is told.
	answer domain.LastOperation
	// stalled says why the operation could not be taken further now (the
	// Director could not be asked, or Vault not written); answer stands.
	stalled error
}

// follow takes rec's operation in progress as far as the Director's task
// allows (under the instance's lock), recording its outcome once the task
// has ended. Its error means that the outcome could not be recorded: there
// is nothing to answer.
func (s *settler) follow(ctx context.Context, id string, rec *vault.Record) (progress, error) {
	op := rec.LastOperation
	if op == nil || op.State != stateInProgress {
		return progress{answer: answer(op)}, nil
	}
	task, found, err := s.findTask(ctx, id, rec, op)
	if err != nil {
		return progress{
			answer:  inProgress(op.Type + " in progress: the BOSH Director cannot be reached right now"),
			stalled: fmt.Errorf("%w: asking about the task of a %s (task %d): %w", ErrDirectorUnavailable, op.Type, op.TaskID, err),
		}, nil
	}
	if !found {
		return s.lostTask(ctx, id, op), nil
	}
	if !task.Terminal() {
		return progress{answer: inProgress(taskDescription(op.Type, task))}, nil
	}
	return s.finish(ctx, id, rec, task)
}

func inProgress(desc string) domain.LastOperation {
	return domain.LastOperation{State: domain.InProgress, Description: desc}
}

// findTask returns op's task: by its recorded id, or else by its context id
// (recording the id it finds). found is false when the Director has none.
func (s *settler) findTask(ctx context.Context, id string, rec *vault.Record, op *vault.Operation) (task bosh.Task, found bool, err error) {
	dir, err := s.dirs.of(rec)
	if err != nil {
		return task, false, err
	}
	if op.TaskID != 0 {
		task, err = dir.Director.Task(ctx, op.TaskID)
		if errors.Is(err, bosh.ErrTaskNotFound) {
			return task, false, nil
		}
		return task, err == nil, err
	}
	t, err := operation.Find(ctx, operation.OfDeployment(dir.Reader, rec.Deployment(id)), op.ContextID)
	if err != nil || t.ID == 0 {
		return task, false, err
	}
	s.log.Info("found an unrecorded bosh task by its context id", "instance", id, "task", t.ID)
	if err := s.ops.set(ctx, id, op.ContextID, func(o *vault.Operation) { o.TaskID = t.ID }); err != nil {
		s.log.Warn("could not record the bosh task", "instance", id, "task", t.ID, "error", err)
	}
	return t, true, nil
}

// lostTask answers for an operation whose task the Director does not know:
// in progress while its task may still show up, failed after LostTaskGrace
// (or at once when a recorded task id is unknown to the Director).
func (s *settler) lostTask(ctx context.Context, id string, op *vault.Operation) progress {
	if op.TaskID == 0 && time.Since(startedAt(op)) < s.lostTaskGrace {
		return progress{answer: inProgress(op.Type + " in progress: waiting for the BOSH task to start")}
	}
	msg := op.Type + " failed: the BOSH Director has no task for it; please try again"
	err := s.ops.failure(ctx, id, op, msg, errors.New("no bosh task with the operation's id or context id"))
	return progress{answer: domain.LastOperation{State: domain.Failed, Description: msg}, stalled: err}
}

// startedAt is when op started; the zero time when unknown.
func startedAt(op *vault.Operation) time.Time {
	t, err := time.Parse(time.RFC3339, op.StartedAt)
	if err != nil {
		return time.Time{}
	}
	return t
}

// finish records the outcome of op's terminal task. A deprovision that
// succeeded removes the instance's record and secrets (a removal that fails
// stays in progress, to be tried again); a provision or update that
// succeeded runs its plan's post-deploy errands first (postDeploy), then is
// backed up.
func (s *settler) finish(ctx context.Context, id string, rec *vault.Record, task bosh.Task) (progress, error) {
	op := rec.LastOperation
	if op.Errand != "" { // a post-deploy errand's task
		p, err := s.errands.settle(ctx, id, rec, task)
		if err == nil && p.answer.State == domain.Succeeded {
			s.backup(ctx, id)
		}
		return p, err
	}
	if names := s.errands.postDeployOf(rec, op); task.Succeeded() && len(names) > 0 {
		return s.errands.start(ctx, id, rec, task, names)
	}
	desc := taskDescription(op.Type, task)
	if task.Succeeded() && op.Type == opTypeDeprovision {
		if err := s.remove.cleanup(ctx, id); err != nil {
			return progress{answer: inProgress("deprovision in progress: removing the instance's records"), stalled: err}, nil
		}
		s.history.ended(ctx, id, op, stateSucceeded, desc, task.ID)
		s.log.Info("deprovisioned", "instance", id, "task", task.ID)
		return progress{answer: domain.LastOperation{State: domain.Succeeded, Description: desc}}, nil
	}
	state := stateFailed
	if task.Succeeded() {
		state = stateSucceeded
	}
	err := s.ops.setRecord(ctx, id, op.ContextID, func(next *vault.Record) {
		o := next.LastOperation
		o.State, o.Description, o.TaskID = state, desc, task.ID
		if state == stateFailed && op.Type == opTypeDeprovision { // the deletion ran: part of the instance may be gone
			markDeleteFailed(o)
		}
		if state == stateSucceeded { // what the operation asked is the instance's now
			o.Pending.Apply(next)
			if op.Type == opTypeStart { // started again: the retirement is over
				next.Retiring = nil
			}
		}
		o.Pending = nil
	})
	if err != nil {
		return progress{}, err
	}
	s.history.ended(ctx, id, op, state, desc, task.ID)
	s.log.Info("operation ended", "instance", id, "operation", op.Type, "state", state, "task", task.ID, "result", task.Result)
	if state == stateSucceeded {
		s.backup(ctx, id)
	} else if op.Type == opTypeUpdate {
		s.deploy.recordRunning(ctx, id, rec)
	}
	return progress{answer: domain.LastOperation{State: domain.LastOperationState(state), Description: desc}}, nil
}

// backup snapshots the instance's records after a successful operation, so
// that the reconciler can restore the broker's fields (org, space,
// parameters) should the index entry be lost. A failure is only logged.
func (s *settler) backup(ctx context.Context, id string) {
	if _, err := s.store.Backup(ctx, id); err != nil {
		s.log.Warn("could not back up the instance's records", "instance", id, "error", err)
	}
}

// pollRunning answers a poll of an operation whose recorded task the
// Director says is still running, without the instance's lock or lease:
// such a poll writes nothing (follow would answer the same), so it costs no
// lease writes, although a platform polls every few seconds for the whole
// deploy. ok is false when the poll must take the lock: without
// SharedLimits (one daemon: the mutex costs nothing), when no task id is
// recorded yet (follow looks it up and records it), when the task has ended
// (follow records its outcome) or when the Director could not be asked
// (follow reports it).
func (s *settler) pollRunning(ctx context.Context, rec *vault.Record) (domain.LastOperation, bool) {
	op := rec.LastOperation
	if !s.shared || op == nil || op.State != stateInProgress || op.TaskID == 0 {
		return domain.LastOperation{}, false
	}
	dir, err := s.dirs.of(rec)
	if err != nil {
		return domain.LastOperation{}, false
	}
	task, err := dir.Director.Task(ctx, op.TaskID)
	if err != nil || task.Terminal() {
		return domain.LastOperation{}, false
	}
	return inProgress(taskDescription(op.Type, task)), true
}
