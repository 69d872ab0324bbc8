package broker

import (
	"context"
	"time"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// Unbind answers DELETE /v2/service_instances/:id/service_bindings/:bid:
// the binding's credentials are deleted after a backup of the instance that
// holds them; an unknown binding is 410.
//
// A per_binding plan's unbind is asynchronous (binder.unbindPerBinding): without
// accepts_incomplete it is 422 AsyncRequired.
func (b *Broker) Unbind(ctx context.Context, id, bid string, d domain.UnbindDetails, async bool) (domain.UnbindSpec, error) {
	ctx, unlock, err := b.locks.existing(ctx, id, apiresponses.ErrBindingDoesNotExist)
	if err != nil {
		return domain.UnbindSpec{}, err
	}
	defer unlock()
	rec, err := b.opts.Store.Record(ctx, id)
	switch {
	case err != nil:
		return domain.UnbindSpec{}, b.report.internal("could not read the instance's record", err, "instance", id)
	case rec != nil:
		if err := judgeIDs(rec, b.opts.Catalog, d.ServiceID, d.PlanID); err != nil {
			return domain.UnbindSpec{}, err
		}
	}
	stored, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, bid))
	if err != nil {
		return domain.UnbindSpec{}, b.report.internal("could not read the binding", err, "instance", id, "binding", bid)
	}
	if !ok {
		return domain.UnbindSpec{}, apiresponses.ErrBindingDoesNotExist
	}
	if rec != nil {
		if _, plan, found := b.opts.Catalog.Plan(rec.PlanID); found && plan.PerBinding() {
			if !async {
				return domain.UnbindSpec{}, apiresponses.ErrAsyncRequired
			}
			return b.bind.unbindPerBinding(ctx, id, bid, rec, plan, stored)
		}
	}
	backup, err := b.opts.Store.DeleteSecretsBackedUp(ctx, id, bindingPath(id, bid))
	if err != nil {
		return domain.UnbindSpec{}, b.report.internal("could not back up and delete the binding", err, "instance", id, "binding", bid)
	}
	if err := b.bindings.list(ctx, id, bid, false); err != nil {
		b.log.Warn("could not unlist a deleted binding", "instance", id, "binding", bid, "error", err)
	}
	b.log.Info("unbound", "instance", id, "binding", bid, "backup", backup)
	b.history.bindingEvent(ctx, id, eventUnbind, "", bid)
	return domain.UnbindSpec{}, nil
}

// GetBinding answers GET /v2/service_instances/:id/service_bindings/:bid
// with the stored credentials; an unknown binding is 404.
func (b *Broker) GetBinding(ctx context.Context, id, bid string, _ domain.FetchBindingDetails) (domain.GetBindingSpec, error) {
	stored, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, bid))
	if err != nil {
		return domain.GetBindingSpec{}, b.report.internal("could not read the binding", err, "instance", id, "binding", bid)
	}
	if op := opOf(stored); !ok || (op.Type == bindOp && op.State != stateSucceeded) {
		return domain.GetBindingSpec{}, errBindingNotFound // a bind under way or failed is not there yet (OSB)
	}
	return domain.GetBindingSpec{Credentials: stored["credentials"], Parameters: stored["parameters"]}, nil
}

// LastBindingOperation answers a binding's last operation. A shared plan's
// bindings are synchronous: succeeded when the binding exists, 404 when it
// does not. A per_binding plan's bind or unbind is followed to its task
// (bindingSettler.follow, under the instance's hold; while another operation holds
// it, the answer is in progress, with Retry-After); once an unbind has
// finished and the binding is gone, a poll for it is 410 (the spec, 2.16
// on: the platform takes it as success), whether it names the unbind's
// operation or not (the instance's history says it was unbound).
func (b *Broker) LastBindingOperation(ctx context.Context, id, bid string, d domain.PollDetails) (domain.LastOperation, error) {
	ans, err := b.lastBindingOperation(ctx, id, bid, d)
	if h := hintsOf(ctx); h != nil && err == nil && ans.State == domain.InProgress {
		var plan catalog.Plan
		if rec, rerr := b.opts.Store.Record(ctx, id); rerr == nil && rec != nil {
			_, plan, _ = b.opts.Catalog.Plan(rec.PlanID)
		}
		stored, _, _ := b.opts.Store.Secret(ctx, bindingPath(id, bid))
		started, _ := time.Parse(time.RFC3339Nano, opOf(stored).StartedAt)
		h.retryAfter = retryAfter(plan, started, time.Now())
	}
	return ans, err
}

// lastBindingOperation is LastBindingOperation's answer.
func (b *Broker) lastBindingOperation(ctx context.Context, id, bid string, d domain.PollDetails) (domain.LastOperation, error) {
	stored, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, bid))
	switch {
	case err != nil:
		return domain.LastOperation{}, b.report.internal("could not read the binding", err, "instance", id, "binding", bid)
	case !ok && d.OperationData == unbindOp:
		return domain.LastOperation{}, errBindingGone
	case !ok:
		unbound, err := wasUnbound(ctx, b.opts.Store, id, bid)
		if err != nil {
			return domain.LastOperation{}, b.report.internal("could not read the instance's history", err, "instance", id)
		}
		if unbound {
			return domain.LastOperation{}, errBindingGone
		}
		return domain.LastOperation{}, errBindingNotFound
	case opOf(stored).Type == "":
		return domain.LastOperation{State: domain.Succeeded, Description: "the binding exists"}, nil
	case opOf(stored).State != stateInProgress:
		return bindingAnswer(opOf(stored)), nil
	}
	ctx, unlock, err := b.locks.hold(ctx, id)
	if err != nil {
		return inProgress(opOf(stored).Type + " in progress"), nil
	}
	defer unlock()
	rec, err := b.opts.Store.Record(ctx, id)
	if err != nil || rec == nil {
		return inProgress(opOf(stored).Type + " in progress"), nil
	}
	if stored, ok, err = b.opts.Store.Secret(ctx, bindingPath(id, bid)); err != nil || !ok { // read again under the hold
		return inProgress(opOf(stored).Type + " in progress"), nil
	}
	last, err := b.bindOps.follow(ctx, id, bid, rec, stored)
	if err != nil {
		b.log.Warn("a binding's operation could not be taken further", "instance", id, "binding", bid, "error", err)
	}
	return last, nil
}
