package broker

import (
	"context"
	"fmt"

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

// bindingIDs lists instance id's bindings, in the order they were made.
func (b *Broker) bindingIDs(ctx context.Context, id string) ([]string, error) {
	list, _, err := b.opts.Store.Secret(ctx, bindingsListPath(id))
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

// liveBindings are the bindings a per_binding plan's manifest declares for
// instance id: its live bindings in the order they were made, each with
// its own secrets, skip left out (an unbind renders without it) and extra
// added last (a bind renders with it). Empty for a shared plan.
func (b *Broker) liveBindings(ctx context.Context, id string, plan catalog.Plan, skip string, extra *catalog.Binding) ([]catalog.Binding, error) {
	out := []catalog.Binding{}
	if !plan.PerBinding() {
		return out, nil
	}
	ids, err := b.bindingIDs(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, bid := range ids {
		if bid == skip || (extra != nil && bid == extra.ID) {
			continue
		}
		doc, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, bid))
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
