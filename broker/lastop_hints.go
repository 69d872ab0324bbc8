package broker

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/pivotal-cf/brokerapi/v11/domain"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// pollHints are what a last_operation answer carries that brokerapi's
// domain.LastOperation cannot: LastOperation fills them in, shapeAnswers
// sends them.
type pollHints struct {
	// retryAfter is the Retry-After of an operation in progress, in
	// seconds; 0: none.
	retryAfter int
	// usable and repeatable are a failed operation's instance_usable and
	// update_repeatable; nil: absent (the spec: only for an update's or a
	// deprovision's failure, update_repeatable only for an update's).
	usable, repeatable *bool
}

// pollHintsKey carries a request's *pollHints in its context.
type pollHintsKey struct{}

// hintsOf is the request's pollHints; nil when it came some other way
// than Handler.
func hintsOf(ctx context.Context) *pollHints {
	h, _ := ctx.Value(pollHintsKey{}).(*pollHints)
	return h
}

// apply sets Retry-After and adds instance_usable and update_repeatable to
// the last_operation body raw, when there are any.
func (h *pollHints) apply(header http.Header, raw []byte) []byte {
	if h.retryAfter > 0 {
		header.Set("Retry-After", strconv.Itoa(h.retryAfter))
	}
	if h.usable == nil && h.repeatable == nil {
		return raw
	}
	var body struct {
		State       string `json:"state"`
		Description string `json:"description,omitempty"`
	}
	if json.Unmarshal(raw, &body) != nil || body.State != string(domain.Failed) {
		return raw
	}
	return compact(struct {
		State       string `json:"state"`
		Description string `json:"description,omitempty"`
		Usable      *bool  `json:"instance_usable,omitempty"`
		Repeatable  *bool  `json:"update_repeatable,omitempty"`
	}{body.State, body.Description, h.usable, h.repeatable})
}

// maxRetryAfter bounds the Retry-After of a long operation (unless the
// plan's polling interval is longer): the platform still hears of its end
// within five minutes.
const maxRetryAfter = 300

// retryAfter is how long, in seconds, the platform should wait before it
// asks again about an operation that started at started: a tenth of how
// long it has run (a deploy that has run ten minutes is unlikely to end in
// the next ten seconds), at least the plan's polling interval and at most
// maxRetryAfter (or the interval, when longer).
func retryAfter(plan catalog.Plan, started, now time.Time) int {
	floor := plan.Interval()
	secs := floor
	if !started.IsZero() && now.After(started) {
		secs = max(secs, int(now.Sub(started)/time.Second)/10)
	}
	return min(secs, max(floor, maxRetryAfter))
}

// hint fills in the request's pollHints for ans, the answer about rec's
// operation: Retry-After while it is in progress; instance_usable and
// update_repeatable once it failed, from the record as it is now.
func (b *Broker) hint(ctx context.Context, id string, rec *vault.Record, ans domain.LastOperation) {
	h := hintsOf(ctx)
	if h == nil || rec == nil || rec.LastOperation == nil {
		return
	}
	switch ans.State {
	case domain.InProgress:
		_, plan, _ := b.opts.Catalog.Plan(rec.PlanID) // a plan gone from the catalog: the default interval
		h.retryAfter = retryAfter(plan, startedAt(rec.LastOperation), time.Now())
	case domain.Failed:
		if rec.LastOperation.State != stateFailed { // it failed just now: the record says how
			now, err := b.opts.Store.Record(ctx, id)
			if err != nil || now == nil || now.LastOperation == nil {
				return
			}
			rec = now
		}
		h.usable, h.repeatable = failedHints(rec.LastOperation)
	}
}

// failedHints are a failed operation's instance_usable and
// update_repeatable. A failed update leaves the instance as it was last
// applied (what ran keeps running; a post-deploy errand that failed ran
// on what was deployed): usable, and the same update may be sent again
// (it deploys again). A failed deprovision is usable unless its
// deployment's deletion itself failed (some of it may be gone:
// deleteFailed); it has no update_repeatable. Any other operation's
// failure has neither (the spec: MUST NOT be present), a provision's
// included: the platform treats a failed provision as unusable anyway.
func failedHints(op *vault.Operation) (usable, repeatable *bool) {
	yes, no := true, false
	switch op.Type {
	case opTypeUpdate:
		return &yes, &yes
	case opTypeDeprovision:
		if deleteFailed(op) {
			return &no, nil
		}
		return &yes, nil
	}
	return nil, nil
}

// deleteRanKey marks, in a failed deprovision's operation, that the
// Director's deletion of the deployment ran and failed (markDeleteFailed):
// part of the instance may be gone.
const deleteRanKey = "delete_failed"

// markDeleteFailed marks op's deletion as run and failed.
func markDeleteFailed(op *vault.Operation) {
	if op.Extra == nil {
		op.Extra = map[string]json.RawMessage{}
	}
	op.Extra[deleteRanKey] = json.RawMessage("true")
}

// deleteFailed says whether op's deletion of the deployment ran and failed.
func deleteFailed(op *vault.Operation) bool {
	var ran bool
	return op.Extra != nil && json.Unmarshal(op.Extra[deleteRanKey], &ran) == nil && ran
}
