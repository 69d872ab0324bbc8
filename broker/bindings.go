package broker

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// The operation a per_binding plan's binding document records
// ("operation": its type, state, task id, context id, description).
const (
	bindOp   = "bind"
	unbindOp = "unbind"
)

// bindingOp is a binding's asynchronous operation as its document keeps it.
type bindingOp struct {
	Type, State, ContextID, Description, StartedAt string
	TaskID                                         int
}

// opOf reads the operation of a binding document (zero: none, a binding
// of a shared plan or made before per_binding).
func opOf(doc map[string]any) bindingOp {
	m, _ := doc["operation"].(map[string]any)
	op := bindingOp{}
	op.Type, _ = m["type"].(string)
	op.State, _ = m["state"].(string)
	op.ContextID, _ = m["context_id"].(string)
	op.Description, _ = m["description"].(string)
	op.StartedAt, _ = m["started_at"].(string)
	if n, ok := m["task_id"].(float64); ok {
		op.TaskID = int(n)
	}
	if n, ok := m["task_id"].(int); ok {
		op.TaskID = n
	}
	return op
}

// doc is the operation as a binding document keeps it.
func (op bindingOp) doc() map[string]any {
	return map[string]any{"type": op.Type, "state": op.State, "context_id": op.ContextID,
		"description": op.Description, "task_id": op.TaskID, "started_at": op.StartedAt}
}

// live says whether a binding document's user belongs in the manifest: it
// has secrets of its own, its bind did not fail, and no unbind of it is
// under way or done.
func live(doc map[string]any) bool {
	if _, ok := doc["secrets"].(map[string]any); !ok {
		return false
	}
	switch op := opOf(doc); {
	case op.Type == bindOp && op.State == stateFailed:
		return false
	case op.Type == unbindOp && op.State != stateFailed:
		return false
	}
	return true
}

// bindingStore keeps an instance's bindings' documents in Vault
// ({id}/bindings/{bid}) and the list of their ids ({id}/binding-ids), each
// changed by check-and-set.
type bindingStore struct {
	secrets Secrets
	report  reporter
}

// ids lists instance id's bindings, in the order they were made.
func (bs *bindingStore) ids(ctx context.Context, id string) ([]string, error) {
	list, _, err := bs.secrets.Secret(ctx, bindingsListPath(id))
	if err != nil {
		return nil, fmt.Errorf("reading the list of the bindings of instance %s: %w", id, err)
	}
	raw, _ := list["ids"].([]any)
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// live are the bindings a per_binding plan's manifest declares for
// instance id: its live bindings in the order they were made, each with
// its own secrets, skip left out (an unbind renders without it) and extra
// added last (a bind renders with it). Empty for a shared plan.
func (bs *bindingStore) live(ctx context.Context, id string, plan catalog.Plan, skip string, extra *catalog.Binding) ([]catalog.Binding, error) {
	out := []catalog.Binding{}
	if !plan.PerBinding() {
		return out, nil
	}
	ids, err := bs.ids(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, bid := range ids {
		if bid == skip || (extra != nil && bid == extra.ID) {
			continue
		}
		doc, ok, err := bs.secrets.Secret(ctx, bindingPath(id, bid))
		if err != nil {
			return nil, fmt.Errorf("reading binding %s of instance %s: %w", bid, id, err)
		}
		if ok && live(doc) {
			out = append(out, catalog.Binding{ID: bid, Secrets: doc["secrets"].(map[string]any)})
		}
	}
	if extra != nil {
		out = append(out, *extra)
	}
	return out, nil
}

// list adds binding bid to the list of instance id's bindings (or,
// add false, takes it out), by check-and-set: an id another broker listed
// meanwhile is kept.
func (bs *bindingStore) list(ctx context.Context, id, bid string, add bool) error {
	err := bs.secrets.UpdateSecret(ctx, bindingsListPath(id), func(cur map[string]any, _ bool) (map[string]any, error) {
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

// store lists the binding's id, then writes its credentials, both
// by check-and-set: the credentials are created once (vault.ErrConflict
// when another broker wrote them first).
func (bs *bindingStore) store(ctx context.Context, id, bid string, data map[string]any) error {
	if err := bs.list(ctx, id, bid, true); err != nil {
		return err
	}
	if err := bs.secrets.CreateSecret(ctx, bindingPath(id, bid), data); err != nil {
		return fmt.Errorf("writing binding %s: %w", bid, err)
	}
	return nil
}

// setOp records op on the binding's document, provided its current
// operation has contextID ("": whatever it has).
func (bs *bindingStore) setOp(ctx context.Context, id, bid, contextID string, op bindingOp) error {
	return bs.secrets.UpdateSecret(ctx, bindingPath(id, bid), func(cur map[string]any, ok bool) (map[string]any, error) {
		if !ok || (contextID != "" && opOf(cur).ContextID != contextID) {
			return nil, nil
		}
		next := make(map[string]any, len(cur))
		for k, v := range cur {
			next[k] = v
		}
		next["operation"] = op.doc()
		return next, nil
	})
}

// underMax refuses (422, naming the plan's max_bindings) a new
// binding of an instance that has as many as its plan allows. It is called
// under the instance's hold (across daemons with SharedLimits), so that
// two binds cannot both take the last place.
func (bs *bindingStore) underMax(ctx context.Context, id string, plan catalog.Plan) error {
	if plan.MaxBindings <= 0 {
		return nil
	}
	list, _, err := bs.secrets.Secret(ctx, bindingsListPath(id))
	if err != nil {
		return bs.report.internal("could not read the list of the instance's bindings", err, "instance", id)
	}
	n, _ := list["ids"].([]any)
	if len(n) >= plan.MaxBindings {
		return failure(fmt.Errorf("plan %s allows at most %d bindings of an instance (its max_bindings), and this instance has %d: unbind one first",
			plan.ID, plan.MaxBindings, len(n)), http.StatusUnprocessableEntity, "MaxBindingsReached")
	}
	return nil
}
