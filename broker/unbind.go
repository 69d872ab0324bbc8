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
func (b *Broker) Unbind(ctx context.Context, id, bid string, _ domain.UnbindDetails, _ bool) (domain.UnbindSpec, error) {
	ctx, unlock, err := b.lockExisting(ctx, id, apiresponses.ErrBindingDoesNotExist)
	if err != nil {
		return domain.UnbindSpec{}, err
	}
	defer unlock()
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
	ids, err := b.bindingIDs(ctx, id)
	if err == nil {
		err = b.putBindingIDs(ctx, id, slices.DeleteFunc(ids, func(s string) bool { return s == bid }))
	}
	if err != nil {
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
// succeeded when the binding exists, 410 when it does not.
func (b *Broker) LastBindingOperation(ctx context.Context, id, bid string, _ domain.PollDetails) (domain.LastOperation, error) {
	_, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, bid))
	if err != nil {
		return domain.LastOperation{}, b.internal("could not read the binding", err, "instance", id, "binding", bid)
	}
	if !ok {
		return domain.LastOperation{}, apiresponses.ErrBindingDoesNotExist
	}
	return domain.LastOperation{State: domain.Succeeded, Description: "the binding exists"}, nil
}

// bindingIDs lists the ids of an instance's bindings.
func (b *Broker) bindingIDs(ctx context.Context, id string) ([]string, error) {
	s, _, err := b.opts.Store.Secret(ctx, bindingsListPath(id))
	if err != nil {
		return nil, fmt.Errorf("reading the bindings of instance %s: %w", id, err)
	}
	raw, _ := s["ids"].([]any)
	ids := make([]string, 0, len(raw))
	for _, v := range raw {
		if s, ok := v.(string); ok {
			ids = append(ids, s)
		}
	}
	return ids, nil
}

// putBindingIDs writes the ids of an instance's bindings.
func (b *Broker) putBindingIDs(ctx context.Context, id string, ids []string) error {
	if err := b.opts.Store.PutSecret(ctx, bindingsListPath(id), map[string]any{"ids": ids}); err != nil {
		return fmt.Errorf("writing the bindings of instance %s: %w", id, err)
	}
	return nil
}
