package broker

import (
	"context"
	"fmt"
	"slices"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"
)

// Unbind answers DELETE /v2/service_instances/:id/service_bindings/:bid:
// the binding's credentials are deleted after a backup of the instance that
// holds them; an unknown binding is 410.
func (b *Broker) Unbind(ctx context.Context, id, bid string, d domain.UnbindDetails, _ bool) (domain.UnbindSpec, error) {
	ctx, unlock, err := b.lockExisting(ctx, id, apiresponses.ErrBindingDoesNotExist)
	if err != nil {
		return domain.UnbindSpec{}, err
	}
	defer unlock()
	switch rec, err := b.opts.Store.Record(ctx, id); {
	case err != nil:
		return domain.UnbindSpec{}, b.internal("could not read the instance's record", err, "instance", id)
	case rec != nil:
		if err := judgeIDs(rec, b.opts.Catalog, d.ServiceID, d.PlanID); err != nil {
			return domain.UnbindSpec{}, err
		}
	}
	_, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, bid))
	if err != nil {
		return domain.UnbindSpec{}, b.internal("could not read the binding", err, "instance", id, "binding", bid)
	}
	if !ok {
		return domain.UnbindSpec{}, apiresponses.ErrBindingDoesNotExist
	}
	backup, err := b.opts.Store.DeleteSecretsBackedUp(ctx, id, bindingPath(id, bid))
	if err != nil {
		return domain.UnbindSpec{}, b.internal("could not back up and delete the binding", err, "instance", id, "binding", bid)
	}
	if err := b.listBinding(ctx, id, bid, false); err != nil {
		b.log.Warn("could not unlist a deleted binding", "instance", id, "binding", bid, "error", err)
	}
	b.log.Info("unbound", "instance", id, "binding", bid, "backup", backup)
	b.bindingEvent(ctx, id, eventUnbind, "", bid)
	return domain.UnbindSpec{}, nil
}

// GetBinding answers GET /v2/service_instances/:id/service_bindings/:bid
// with the stored credentials; an unknown binding is 404.
func (b *Broker) GetBinding(ctx context.Context, id, bid string, _ domain.FetchBindingDetails) (domain.GetBindingSpec, error) {
	stored, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, bid))
	if err != nil {
		return domain.GetBindingSpec{}, b.internal("could not read the binding", err, "instance", id, "binding", bid)
	}
	if !ok {
		return domain.GetBindingSpec{}, errBindingNotFound
	}
	return domain.GetBindingSpec{Credentials: stored["credentials"], Parameters: stored["parameters"]}, nil
}

// LastBindingOperation answers for bindings, which are synchronous:
// succeeded when the binding exists, 404 when it does not (the spec, 2.16
// on: 410 is for an asynchronous unbind that finished, which this broker
// never starts).
func (b *Broker) LastBindingOperation(ctx context.Context, id, bid string, _ domain.PollDetails) (domain.LastOperation, error) {
	_, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, bid))
	if err != nil {
		return domain.LastOperation{}, b.internal("could not read the binding", err, "instance", id, "binding", bid)
	}
	if !ok {
		return domain.LastOperation{}, errBindingNotFound
	}
	return domain.LastOperation{State: domain.Succeeded, Description: "the binding exists"}, nil
}

// listBinding adds binding bid to the list of instance id's bindings (or,
// add false, takes it out), by check-and-set: an id another broker listed
// meanwhile is kept.
func (b *Broker) listBinding(ctx context.Context, id, bid string, add bool) error {
	err := b.opts.Store.UpdateSecret(ctx, bindingsListPath(id), func(cur map[string]any, _ bool) (map[string]any, error) {
		raw, _ := cur["ids"].([]any)
		ids := make([]string, 0, len(raw)+1)
		for _, v := range raw {
			if s, ok := v.(string); ok {
				ids = append(ids, s)
			}
		}
		switch has := slices.Contains(ids, bid); {
		case add && has, !add && !has:
			return nil, nil // as it should be: no write
		case add:
			ids = append(ids, bid)
		default:
			ids = slices.DeleteFunc(ids, func(s string) bool { return s == bid })
		}
		return map[string]any{"ids": ids}, nil
	})
	if err != nil {
		return fmt.Errorf("changing the list of the bindings of instance %s: %w", id, err)
	}
	return nil
}
