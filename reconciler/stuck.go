package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Operations settles a broker operation that stays in progress, from its
// Director task; *broker.Broker has it.
type Operations interface {
	// SettleOperation follows the instance's operation to the Director and
	// records its outcome once its task has ended (or failed, with a
	// reason, when the Director has no task for it): state is "in
	// progress", "succeeded", "failed", or "gone" when the record no longer
	// exists. An error with state "in progress" means the Director could
	// not be asked.
	SettleOperation(ctx context.Context, id string) (state, description string, err error)
}

// maxSettledPerRun bounds the stuck operations one run settles (the rest
// wait for the next run).
const maxSettledPerRun = 100

// stuckOperations lists the instances whose broker operation has been in
// progress for longer than after (or since an unknown time), oldest first.
func stuckOperations(index map[string]*vault.Record, start time.Time, after time.Duration) []string {
	type stuck struct {
		id    string
		since time.Time
	}
	var out []stuck
	for id, rec := range index {
		if !rec.OperationInProgress() {
			continue
		}
		since, err := time.Parse(time.RFC3339, rec.LastOperation.StartedAt)
		if err != nil || start.Sub(since) >= after {
			out = append(out, stuck{id, since})
		}
	}
	slices.SortFunc(out, func(a, b stuck) int {
		if c := a.since.Compare(b.since); c != 0 {
			return c
		}
		return compareStrings(a.id, b.id)
	})
	ids := make([]string, len(out))
	for i, s := range out {
		ids[i] = s.id
	}
	return ids
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// settleStuck settles the stuck operations (at most maxSettledPerRun), not
// in a dry run, which lists them; each outcome goes to the summary and the
// instance's history.
func (r *run) settleStuck(ctx context.Context) {
	ids := stuckOperations(r.index, r.start, r.parts.cfg.StuckOperationAfter)
	if len(ids) == 0 {
		return
	}
	var settled []Settled
	for i, id := range ids {
		op := r.index[id].LastOperation
		s := Settled{InstanceID: id, Type: op.Type, StartedAt: op.StartedAt, State: vault.OperationInProgress,
			Description: "not settled: a dry run, or more stuck operations than one run settles"}
		if ctx.Err() != nil {
			break
		}
		if !r.opts.DryRun && r.parts.ops != nil && i < maxSettledPerRun {
			r.settleOne(ctx, id, &s)
		} else if r.parts.ops == nil && !r.opts.DryRun {
			s.Description = "not settled: the reconciler runs without the broker"
		}
		settled = append(settled, s)
	}
	r.state.count(func(sum *Summary) { sum.Settled = settled })
}

// settleOne asks the broker to settle one operation.
func (r *run) settleOne(ctx context.Context, id string, s *Settled) {
	state, desc, err := r.parts.ops.SettleOperation(ctx, id)
	s.State, s.Description = state, desc
	if err != nil {
		r.state.failUnlessStopped(ctx, instanceKey(id), fmt.Errorf("instance %s: settling its %s in progress since %s: %w",
			id, s.Type, s.StartedAt, err))
		if s.State == "" {
			s.State = vault.OperationInProgress
		}
		return
	}
	r.log.Info("stuck operation settled from the Director", "instance", id, "operation", s.Type,
		"started_at", s.StartedAt, "state", state, "description", desc)
	if state != vault.OperationInProgress && !errors.Is(ctx.Err(), context.Canceled) {
		r.hist.add(id, vault.Event{Kind: "operation_settled", Deployment: r.index[id].Deployment(id),
			Message: fmt.Sprintf("%s in progress since %s settled by the reconciler: %s (%s)", s.Type, s.StartedAt, state, desc),
			Details: map[string]string{"type": s.Type, "state": state}})
	}
}
