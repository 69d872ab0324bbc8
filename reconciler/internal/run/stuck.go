package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// maxSettledPerRun bounds the stuck operations one run settles (the rest
// wait for the next run).
const maxSettledPerRun = 100

// settler settles the broker's operations that stay in progress past
// Config.StuckOperationAfter, through the broker (Operations).
type settler struct {
	in     stuckIn
	ops    ports.Operations // nil: listed, not settled
	ledger *memory.Ledger
	hist   *memory.Historian
	log    *slog.Logger
}

// stuckIn is what the settler decides from: the index as read at the
// run's start, the bound past which an operation is stuck, and whether the
// run may settle (not a dry run, the broker at hand).
type stuckIn struct {
	index  map[string]*vault.Record
	start  time.Time
	after  time.Duration
	dryRun bool
	broker bool // the run has the broker (Operations) to settle through
}

// stuckStep is one stuck operation as the summary lists it, and whether
// the run asks the broker to settle it.
type stuckStep struct {
	report.Settled
	settle bool
}

// stuck is the run's settler.
func (r *run) stuck() *settler {
	return &settler{in: stuckIn{index: r.seen.index, start: r.start, after: r.p.Config.StuckOperationAfter, dryRun: r.opts.DryRun,
		broker: r.p.Ops != nil}, ops: r.p.Ops, ledger: r.ledger, hist: r.hist, log: r.log}
}

// StuckOperations lists the instances whose broker operation has been in
// progress for longer than after at time start (or since an unknown time),
// and those of the deprovisions the reconciler started (an orphan
// deployment deleted: no platform polls them), oldest first.
func StuckOperations(index map[string]*vault.Record, start time.Time, after time.Duration) []string {
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
		retired := strings.HasPrefix(rec.LastOperation.ContextID, vault.RetireContextPrefix) // no platform polls it
		if err != nil || retired || start.Sub(since) >= after {
			out = append(out, stuck{id, since})
		}
	}
	slices.SortFunc(out, func(a, b stuck) int { return cmp.Or(a.since.Compare(b.since), cmp.Compare(a.id, b.id)) })
	ids := make([]string, len(out))
	for i, s := range out {
		ids[i] = s.id
	}
	return ids
}

// maxSettledListed bounds the stuck operations a summary lists (a run
// settles at most maxSettledPerRun of them).
const maxSettledListed = 2 * maxSettledPerRun

// plan is what the run does with the stuck operations, oldest first: it
// lists at most maxSettledListed of them (the others wait for the next
// runs, unlisted) and settles the first maxSettledPerRun, none in a dry run
// or without the broker; a step not settled says why in its description.
func (in stuckIn) plan() []stuckStep {
	ids := StuckOperations(in.index, in.start, in.after)
	steps := make([]stuckStep, 0, min(len(ids), maxSettledListed))
	for i, id := range ids[:min(len(ids), maxSettledListed)] {
		op := in.index[id].LastOperation
		st := stuckStep{Settled: report.Settled{InstanceID: id, Type: op.Type, StartedAt: op.StartedAt, State: vault.OperationInProgress,
			Description: "not settled: a dry run, or more stuck operations than one run settles"}}
		switch {
		case in.dryRun:
		case !in.broker:
			st.Description = "not settled: the reconciler runs without the broker"
		case i < maxSettledPerRun:
			st.settle = true
		}
		steps = append(steps, st)
	}
	return steps
}

// settle settles the stuck operations the plan settles and lists the
// others; each outcome goes to the summary and the instance's history.
func (s *settler) settle(ctx context.Context) {
	steps := s.in.plan()
	if len(steps) == 0 {
		return
	}
	var settled []report.Settled
	for _, st := range steps {
		if ctx.Err() != nil {
			break
		}
		if st.settle {
			s.settleOne(ctx, st.InstanceID, &st.Settled)
		}
		settled = append(settled, st.Settled)
	}
	s.ledger.Count(func(sum *report.Summary) { sum.Settled = settled })
}

// settleOne asks the broker to settle one operation.
func (s *settler) settleOne(ctx context.Context, id string, st *report.Settled) {
	state, desc, err := s.ops.SettleOperation(ctx, id)
	st.State, st.Description = state, desc
	if err != nil {
		s.ledger.FailUnlessStopped(ctx, report.InstanceKey(id), fmt.Errorf("instance %s: settling its %s in progress since %s: %w",
			id, st.Type, st.StartedAt, err))
		if st.State == "" {
			st.State = vault.OperationInProgress
		}
		return
	}
	s.log.Info("stuck operation settled from the Director", "instance", id, "operation", st.Type,
		"started_at", st.StartedAt, "state", state, "description", desc)
	if state != vault.OperationInProgress && !errors.Is(ctx.Err(), context.Canceled) {
		s.hist.Add(id, vault.Event{Kind: "operation_settled", Deployment: s.in.index[id].Deployment(id),
			Message: fmt.Sprintf("%s in progress since %s settled by the reconciler: %s (%s)", st.Type, st.StartedAt, state, desc),
			Details: map[string]string{"type": st.Type, "state": state}})
	}
}
