package broker

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Kinds of the events the broker appends to an instance's history (Actor
// "broker"). Their details name ids, plans and tasks, never parameters,
// credentials or secrets.
const (
	actorBroker = "broker"

	eventBind               = "bind"
	eventUnbind             = "unbind"
	eventOperationSucceeded = "operation_succeeded"
	eventOperationFailed    = "operation_failed"
	// eventRefused is an operation the change guard refused before
	// anything was deployed (its message names each change).
	eventRefused = "refused"
)

// history appends what the broker did to each instance's history (Actor
// "broker"), pruned to the retention, and counts the operations' outcomes.
type history struct {
	store     History
	retention vault.HistoryOptions // Options.History
	timeout   time.Duration        // Options.DirectorTimeout: an append outlives the request
	metrics   *Metrics
	who       *identities
	log       *slog.Logger
}

// append appends e to id's history. A failure is logged and goes no
// further: the history never changes what the platform is told. The append
// outlives a platform that hung up, as the work it records did.
func (h *history) append(ctx context.Context, id string, e vault.Event) {
	ctx, cancel := detached(ctx, h.timeout)
	defer cancel()
	e.Actor = actorBroker
	if err := h.store.AppendEvent(ctx, id, e); err != nil {
		h.log.Warn("could not append to the instance's history", "instance", id, "event", e.Kind, "error", err)
		return
	}
	if r := h.retention; r.Keep > 0 || r.MaxAge > 0 {
		if _, err := h.store.PruneEvents(ctx, id, r, time.Now()); err != nil {
			h.log.Warn("could not prune the instance's history", "instance", id, "error", err)
		}
	}
}

// accepted appends the event of an asynchronous operation the platform was
// told has started (Kind: its type), dated when it started, with the id of
// its BOSH task when one was started (0: none), the given details and who
// asked (the originating identity: platform and user). It is
// appended once the Director was asked, so it may come after the operation's
// outcome, which is dated later.
func (h *history) accepted(ctx context.Context, id, deployment string, op *vault.Operation, taskID int, details map[string]string) {
	if details == nil {
		details = map[string]string{}
	}
	if taskID != 0 {
		details["task_id"] = strconv.Itoa(taskID)
	}
	h.who.addTo(ctx, details)
	h.append(ctx, id, vault.Event{Time: startedAt(op), Kind: op.Type, Deployment: deployment, Details: details})
}

// ended counts the outcome of op and appends it to the history: state is
// stateSucceeded or stateFailed, desc what the platform is told, taskID the
// operation's BOSH task (0: none).
func (h *history) ended(ctx context.Context, id string, op *vault.Operation, state, desc string, taskID int) {
	h.metrics.outcome(op.Type, state)
	kind := eventOperationFailed
	if state == stateSucceeded {
		kind = eventOperationSucceeded
	}
	details := map[string]string{"type": op.Type}
	if taskID != 0 {
		details["task_id"] = strconv.Itoa(taskID)
	}
	h.append(ctx, id, vault.Event{Kind: kind, Message: desc, Details: details})
}

// bindingEvent appends a bind or unbind of binding bid.
func (h *history) bindingEvent(ctx context.Context, id, kind, deployment, bid string) {
	details := map[string]string{"binding_id": bid}
	h.who.addTo(ctx, details)
	h.append(ctx, id, vault.Event{Kind: kind, Deployment: deployment, Details: details})
}
