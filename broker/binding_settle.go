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
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// bindingSettler takes a per_binding plan's bind or unbind in progress
// further from its task (LastBindingOperation), and keeps an instance's
// other operations from starting while one is under way.
type bindingSettler struct {
	catalog       *catalog.Catalog
	store         Store
	bindings      *bindingStore
	dirs          *directors
	deploy        *deployer
	metrics       *Metrics
	lostTaskGrace time.Duration // Options.LostTaskGrace
	report        reporter
	log           *slog.Logger
}

// noneUnderWay refuses (422 ConcurrencyError) an instance's update or
// deprovision while a bind or unbind of a per_binding plan is under way on
// it (one nobody polls any more is followed to its end first).
func (bo *bindingSettler) noneUnderWay(ctx context.Context, id string, rec *vault.Record) error {
	if _, plan, ok := bo.catalog.Plan(rec.PlanID); !ok || !plan.PerBinding() {
		return nil
	}
	return bo.others(ctx, id, rec, "a binding's ")
}

// notBusy refuses (422 ConcurrencyError) a binding's bind or unbind while
// the instance's own operation, or another binding's, is under way (a
// binding's operation nobody polls any more is followed to its end first).
func (bo *bindingSettler) notBusy(ctx context.Context, id string, rec *vault.Record) error {
	if rec.OperationInProgress() {
		return concurrency(rec.LastOperation.Type)
	}
	return bo.others(ctx, id, rec, "another binding's ")
}

// others is a ConcurrencyError naming what (e.g. "a binding's ")
// when a binding operation of the instance is under way.
func (bo *bindingSettler) others(ctx context.Context, id string, rec *vault.Record, what string) error {
	ids, err := bo.bindings.ids(ctx, id)
	if err != nil {
		return bo.report.internal("could not read the instance's bindings", err, "instance", id)
	}
	for _, other := range ids {
		doc, ok, err := bo.store.Secret(ctx, bindingPath(id, other))
		if err != nil {
			return bo.report.internal("could not read a binding", err, "instance", id, "binding", other)
		}
		if !ok || opOf(doc).State != stateInProgress {
			continue
		}
		if last, _ := bo.follow(ctx, id, other, rec, doc); last.State == domain.InProgress {
			return concurrency(what + opOf(doc).Type)
		}
	}
	return nil
}

// follow takes a binding's operation in progress further from its
// task: done or failed is recorded (a finished unbind deletes the binding's
// secrets after a backup and unlists it); the answer is last_operation's.
func (bo *bindingSettler) follow(ctx context.Context, id, bid string, rec *vault.Record, doc map[string]any) (domain.LastOperation, error) {
	op := opOf(doc)
	if op.State != stateInProgress {
		return bindingAnswer(op), nil
	}
	dir, err := bo.dirs.of(rec)
	if err != nil {
		return inProgress(op.Type + " in progress: the instance's Director is not configured"), nil
	}
	var task bosh.Task
	if op.TaskID != 0 {
		task, err = dir.Director.Task(ctx, op.TaskID)
	} else {
		task, err = operation.Find(ctx, operation.OfDeployment(dir.Reader, rec.Deployment(id)), op.ContextID)
	}
	switch {
	case err != nil && !errors.Is(err, bosh.ErrTaskNotFound):
		bo.log.Warn("could not ask about a binding's task", "instance", id, "binding", bid, "error", err)
		return inProgress(op.Type + " in progress: the BOSH Director cannot be reached right now"), nil
	case task.ID == 0 || errors.Is(err, bosh.ErrTaskNotFound):
		if started, perr := time.Parse(time.RFC3339Nano, op.StartedAt); perr == nil && time.Since(started) < bo.lostTaskGrace {
			return inProgress(op.Type + " in progress: waiting for the BOSH task to start"), nil
		}
		op.State, op.Description = stateFailed, op.Type+" failed: the BOSH Director has no task for it; please try again"
	case !task.Terminal():
		return inProgress(taskDescription(op.Type, task)), nil
	case task.Succeeded() && op.Type == unbindOp:
		backup, err := bo.store.DeleteSecretsBackedUp(ctx, id, bindingPath(id, bid))
		if err != nil {
			return inProgress("unbind in progress: the binding's secrets could not be deleted yet"), fmt.Errorf("deleting binding %s: %w", bid, err)
		}
		if err := bo.bindings.list(ctx, id, bid, false); err != nil {
			bo.log.Warn("could not unlist a deleted binding", "instance", id, "binding", bid, "error", err)
		}
		bo.log.Info("unbound: its user is gone from the deployment", "instance", id, "binding", bid, "backup", backup)
		bo.metrics.outcome(unbindOp, stateSucceeded)
		return domain.LastOperation{State: domain.Succeeded, Description: taskDescription(op.Type, task)}, nil
	default:
		op.TaskID, op.Description = task.ID, taskDescription(op.Type, task)
		op.State = stateFailed
		if task.Succeeded() {
			op.State = stateSucceeded
		} else {
			bo.deploy.recordRunning(ctx, id, rec) // not the manifest that failed
		}
	}
	if err := bo.bindings.setOp(ctx, id, bid, op.ContextID, op); err != nil {
		return inProgress(op.Type + " in progress"), fmt.Errorf("recording binding %s's outcome: %w", bid, err)
	}
	bo.metrics.outcome(op.Type, op.State)
	return bindingAnswer(op), nil
}

// bindingAnswer is last_operation's answer for a binding operation that ended.
func bindingAnswer(op bindingOp) domain.LastOperation {
	switch op.State {
	case stateFailed:
		return domain.LastOperation{State: domain.Failed, Description: op.Description}
	case stateInProgress:
		return inProgress(op.Description)
	}
	if op.Description == "" {
		op.Description = "the binding exists"
	}
	return domain.LastOperation{State: domain.Succeeded, Description: op.Description}
}

// errBindingGone is last_operation's 410 for a binding whose asynchronous
// unbind finished (the platform takes it as the unbind's success).
var errBindingGone = apiresponses.ErrBindingDoesNotExist
