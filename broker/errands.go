package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/pivotal-cf/brokerapi/v11/domain"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// ErrandDirector runs errands; *bosh.Client has it. A Director whose client
// has not fails an operation whose plan names post-deploy errands.
type ErrandDirector interface {
	RunErrand(ctx context.Context, deployment, errand string, run bosh.ErrandRun) (bosh.Task, error)
	ErrandResults(ctx context.Context, taskID int) ([]bosh.ErrandResult, error)
}

var _ ErrandDirector = (*bosh.Client)(nil)

// maxStderrTail bounds what of a failed errand's standard error the
// operation's description quotes (its end: where errors usually are).
const maxStderrTail = 512

// postDeploy runs a plan's lifecycle errands (plan.yml's
// lifecycle_errands), one task after the other, each recorded in the
// operation (Errand, ErrandsLeft, its task as TaskID). post_deploy: once a
// provision's or an update's deploy succeeded; the operation stays in
// progress until the last exits 0, and fails, quoting the tail of its
// standard error, at the first that does not; what the deploy changed is
// the instance's at once (the deploy succeeded), an errand that fails rolls
// nothing back. pre_delete: before a deprovision deletes the deployment;
// the deletion (remover) starts once the last exits 0, and one that does
// not fails the deprovision with the deployment kept.
type postDeploy struct {
	catalog *catalog.Catalog
	dirs    *directors
	ops     *recorder
	remove  *remover
	history *history
	log     *slog.Logger
}

// postDeployOf are the post-deploy errands of a provision's or an
// update's plan (the plan an update moves to); none for other operations.
func (p *postDeploy) postDeployOf(rec *vault.Record, op *vault.Operation) []string {
	if op.Type != opTypeProvision && op.Type != opTypeUpdate {
		return nil
	}
	planID := rec.PlanID
	if op.Pending != nil && op.Pending.PlanID != "" {
		planID = op.Pending.PlanID
	}
	if _, plan, ok := p.catalog.Plan(planID); ok {
		return plan.PostDeployErrands
	}
	return nil
}

// preDeleteOf are the pre-delete errands of rec's plan.
func (p *postDeploy) preDeleteOf(rec *vault.Record) []string {
	if _, plan, ok := p.catalog.Plan(rec.PlanID); ok {
		return plan.PreDeleteErrands
	}
	return nil
}

// step names the lifecycle step of op's errands in descriptions.
func step(op *vault.Operation) string {
	if op.Type == opTypeDeprovision {
		return "pre-delete"
	}
	return "post-deploy"
}

// runner is the errand side of rec's Director.
func (p *postDeploy) runner(rec *vault.Record) (ErrandDirector, error) {
	dir, err := p.dirs.of(rec)
	if err != nil {
		return nil, err
	}
	r, ok := dir.Director.(ErrandDirector)
	if !ok {
		return nil, errors.New("the BOSH Director client cannot run errands")
	}
	return r, nil
}

// start starts the first of names for rec's operation, whose task (a
// deploy, or the errand before) succeeded, and records it; the operation's
// pending change is applied with the first (its deploy succeeded). A
// Director that cannot be asked leaves the operation as it was: the next
// poll starts the errand again.
func (p *postDeploy) start(ctx context.Context, id string, rec *vault.Record, done bosh.Task, names []string) (progress, error) {
	op := rec.LastOperation
	waiting := inProgress(fmt.Sprintf("%s in progress: %s errand %s starting", op.Type, step(op), names[0]))
	runner, err := p.runner(rec)
	if err != nil {
		return p.fail(ctx, id, op, fmt.Sprintf("%s failed: %s errand %s cannot run: %v", op.Type, step(op), names[0], err), done.ID)
	}
	t, err := runner.RunErrand(bosh.WithContextID(ctx, op.ContextID), rec.Deployment(id), names[0], bosh.ErrandRun{})
	if err != nil && t.ID == 0 {
		return progress{answer: waiting, stalled: fmt.Errorf("%w: starting %s errand %s: %w", ErrDirectorUnavailable, step(op), names[0], err)}, nil
	}
	desc := fmt.Sprintf("%s in progress: %s errand %s running (BOSH task %d)", op.Type, step(op), names[0], t.ID)
	err = p.ops.setRecord(ctx, id, op.ContextID, func(next *vault.Record) {
		o := next.LastOperation
		if o.Errand == "" { // the deploy succeeded: what it asked is the instance's now
			o.Pending.Apply(next)
			o.Pending = nil
		}
		o.TaskID, o.Errand, o.ErrandsLeft, o.Description = t.ID, names[0], names[1:], desc
	})
	if err != nil {
		return progress{}, err
	}
	p.log.Info("lifecycle errand started", "instance", id, "operation", op.Type, "step", step(op), "errand", names[0], "task", t.ID)
	return progress{answer: inProgress(desc)}, nil
}

// settle takes the operation on once its errand's task has ended: the next
// errand, or the operation's outcome.
func (p *postDeploy) settle(ctx context.Context, id string, rec *vault.Record, task bosh.Task) (progress, error) {
	op := rec.LastOperation
	kept := ""
	if op.Type == opTypeDeprovision {
		kept = "; the deployment is kept"
	}
	if !task.Succeeded() {
		return p.fail(ctx, id, op, fmt.Sprintf("%s failed: %s errand %s: BOSH task %d ended %s: %s%s", op.Type, step(op), op.Errand,
			task.ID, task.State, textcut.Marked(task.Result, 300, "..."), kept), task.ID)
	}
	runner, err := p.runner(rec)
	if err != nil {
		return p.fail(ctx, id, op, fmt.Sprintf("%s failed: %s errand %s: %v%s", op.Type, step(op), op.Errand, err, kept), task.ID)
	}
	results, err := runner.ErrandResults(ctx, task.ID)
	if err != nil {
		return progress{answer: inProgress(fmt.Sprintf("%s in progress: reading %s errand %s's outcome", op.Type, step(op), op.Errand)),
			stalled: fmt.Errorf("%w: reading the results of errand task %d: %w", ErrDirectorUnavailable, task.ID, err)}, nil
	}
	for _, r := range results {
		if !r.Succeeded() {
			return p.fail(ctx, id, op, fmt.Sprintf("%s failed: %s errand %s exited %d on %s/%s (BOSH task %d)%s: %s", op.Type, step(op),
				op.Errand, r.ExitCode, r.Instance.Group, r.Instance.ID, task.ID, kept, r.StderrTail(maxStderrTail)), task.ID)
		}
	}
	if len(op.ErrandsLeft) > 0 {
		return p.start(ctx, id, rec, task, op.ErrandsLeft)
	}
	if op.Type == opTypeDeprovision {
		return p.deleteAfter(ctx, id, rec, task)
	}
	desc := fmt.Sprintf("%s succeeded (post-deploy errand %s: BOSH task %d)", op.Type, op.Errand, task.ID)
	err = p.ops.setRecord(ctx, id, op.ContextID, func(next *vault.Record) {
		o := next.LastOperation
		o.State, o.Description, o.TaskID, o.Errand, o.ErrandsLeft = stateSucceeded, desc, task.ID, "", nil
	})
	if err != nil {
		return progress{}, err
	}
	p.history.ended(ctx, id, op, stateSucceeded, desc, task.ID)
	p.log.Info("operation ended", "instance", id, "operation", op.Type, "state", stateSucceeded, "errand", op.Errand, "task", task.ID)
	return progress{answer: domain.LastOperation{State: domain.Succeeded, Description: desc}}, nil
}

// before starts a deprovision's pre-delete errands (names), the deletion to
// follow once the last exits 0 (settle, deleteAfter); one that cannot start
// fails the deprovision, nothing deleted.
func (p *postDeploy) before(ctx context.Context, id string, rec *vault.Record, op *vault.Operation, names []string) (domain.DeprovisionServiceSpec, error) {
	async := domain.DeprovisionServiceSpec{IsAsync: true, OperationData: opTypeDeprovision}
	withOp := *rec
	withOp.LastOperation = op
	pr, err := p.start(ctx, id, &withOp, bosh.Task{}, names)
	switch {
	case err != nil:
		return domain.DeprovisionServiceSpec{}, err
	case pr.stalled != nil:
		msg := fmt.Sprintf("deprovision failed: pre-delete errand %s could not start; nothing was deleted, please try again", names[0])
		if ferr := p.ops.failure(ctx, id, op, msg, pr.stalled); ferr != nil {
			return domain.DeprovisionServiceSpec{}, ferr
		}
	}
	return async, nil
}

// deleteAfter starts a deprovision's deletion once its last pre-delete
// errand succeeded: the operation's task becomes the deletion's.
func (p *postDeploy) deleteAfter(ctx context.Context, id string, rec *vault.Record, errandTask bosh.Task) (progress, error) {
	op := rec.LastOperation
	desc := fmt.Sprintf("deprovision in progress: pre-delete errand %s succeeded (BOSH task %d); deleting the deployment", op.Errand, errandTask.ID)
	err := p.ops.setRecord(ctx, id, op.ContextID, func(next *vault.Record) {
		o := next.LastOperation
		o.TaskID, o.Errand, o.ErrandsLeft, o.Description = 0, "", nil, desc
	})
	if err != nil {
		return progress{}, err
	}
	after := *op
	after.TaskID, after.Errand, after.ErrandsLeft, after.Description = 0, "", nil, desc
	spec, err := p.remove.deleteDeployment(ctx, id, rec, &after, "")
	switch {
	case err != nil:
		return progress{}, err
	case !spec.IsAsync: // the deployment was gone: the records went at once
		return progress{answer: domain.LastOperation{State: domain.Succeeded, Description: "deprovision succeeded: the deployment did not exist"}}, nil
	}
	return progress{answer: inProgress(desc)}, nil
}

// fail records the operation failed with desc (what its deploy changed
// stays: the deploy succeeded).
func (p *postDeploy) fail(ctx context.Context, id string, op *vault.Operation, desc string, taskID int) (progress, error) {
	err := p.ops.setRecord(ctx, id, op.ContextID, func(next *vault.Record) {
		o := next.LastOperation
		if o.Errand == "" && o.Pending != nil { // the deploy succeeded before the errand could not run
			o.Pending.Apply(next)
		}
		o.State, o.Description, o.TaskID, o.Pending, o.Errand, o.ErrandsLeft = stateFailed, desc, taskID, nil, "", nil
	})
	if err != nil {
		return progress{}, err
	}
	p.history.ended(ctx, id, op, stateFailed, desc, taskID)
	p.log.Warn("operation failed in a lifecycle errand", "instance", id, "operation", op.Type, "description", desc)
	return progress{answer: domain.LastOperation{State: domain.Failed, Description: desc}}, nil
}
