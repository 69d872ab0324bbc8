package run

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// stuckIndex is an index of n operations in progress, started 1h, 2h...
// n hours before start (s1 the most recent), beside the records given.
func stuckIndex(start time.Time, n int, more map[string]*vault.Record) map[string]*vault.Record {
	index := map[string]*vault.Record{}
	for i := 1; i <= n; i++ {
		index[fmt.Sprintf("s%d", i)] = &vault.Record{PlanID: "p", LastOperation: &vault.Operation{Type: "update",
			State: vault.OperationInProgress, StartedAt: start.Add(-time.Duration(i) * time.Hour).Format(time.RFC3339)}}
	}
	for id, rec := range more {
		index[id] = rec
	}
	return index
}

// The settler settles the operations stuck past the bound, oldest first
// (those of unknown age before them, a retirement's at any age), at most
// maxSettledPerRun a run; it lists at most maxSettledListed; a dry run and
// a run without the broker settle none and say why.
func TestSettlerSettlesTheOldestStuckWithinTheBound(t *testing.T) {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	op := func(state, startedAt, contextID string) *vault.Record {
		return &vault.Record{PlanID: "p", LastOperation: &vault.Operation{Type: "provision", State: state, StartedAt: startedAt,
			ContextID: contextID}}
	}
	recent := start.Add(-time.Minute).Format(time.RFC3339)
	others := map[string]*vault.Record{
		"recent":  op(vault.OperationInProgress, recent, ""),
		"retired": op(vault.OperationInProgress, recent, vault.RetireContextPrefix+"x"),
		"undated": op(vault.OperationInProgress, "", ""),
		"ended":   op(vault.OperationSucceeded, "2020-01-01T00:00:00Z", ""),
		"quiet":   {PlanID: "p"},
	}
	for _, tc := range []struct {
		name    string
		stuck   int
		others  bool
		dryRun  bool
		broker  bool
		listed  []string // the first ones listed, in order (all of them when there are few)
		count   int      // listed
		settled int      // the first `settled` listed are settled
		why     string   // the description of those not settled
	}{
		{name: "nothing stuck", broker: true},
		{name: "only what is past the bound, oldest first", stuck: 3, others: true, broker: true,
			listed: []string{"undated", "s3", "s2", "s1", "retired"}, count: 5, settled: 5},
		{name: "a dry run lists them", stuck: 3, others: true, dryRun: true, broker: true,
			listed: []string{"undated", "s3", "s2", "s1", "retired"}, count: 5, why: "a dry run"},
		{name: "without the broker: listed", stuck: 2, broker: false, listed: []string{"s2", "s1"}, count: 2,
			why: "without the broker"},
		{name: "a dry run without the broker", stuck: 1, dryRun: true, listed: []string{"s1"}, count: 1, why: "a dry run"},
		{name: "more than a run settles: the oldest settled, the rest listed up to the bound", stuck: 250, broker: true,
			listed: []string{"s250", "s249"}, count: maxSettledListed, settled: maxSettledPerRun, why: "more stuck operations"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var more map[string]*vault.Record
			if tc.others {
				more = others
			}
			in := stuckIn{index: stuckIndex(start, tc.stuck, more), start: start, after: 30 * time.Minute, dryRun: tc.dryRun,
				broker: tc.broker}
			steps := in.plan()
			if len(steps) != tc.count {
				t.Fatalf("%d listed, want %d", len(steps), tc.count)
			}
			for i, st := range steps {
				if i < len(tc.listed) && st.InstanceID != tc.listed[i] {
					t.Fatalf("listed #%d %s, want %s", i, st.InstanceID, tc.listed[i])
				}
				if st.settle != (i < tc.settled) {
					t.Fatalf("%s (#%d) settled %v, want the first %d settled", st.InstanceID, i, st.settle, tc.settled)
				}
				if !st.settle && !strings.Contains(st.Description, tc.why) {
					t.Fatalf("%s not settled: %q, want %q", st.InstanceID, st.Description, tc.why)
				}
				if st.State != vault.OperationInProgress || st.Type != in.index[st.InstanceID].LastOperation.Type {
					t.Fatalf("step %+v", st)
				}
			}
		})
	}
}

// What a run that settles none counts is its plan: each stuck operation
// listed in progress, no error, no history; with none stuck, the
// summary's empty list as it was.
func TestSettlerCountsWhatItListed(t *testing.T) {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		stuck  int
		dryRun bool
	}{
		{name: "none stuck"},
		{name: "a dry run", stuck: 3, dryRun: true},
		{name: "without the broker", stuck: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := slog.New(slog.DiscardHandler)
			ledger := memory.NewLedger(log, report.Summary{Settled: []report.Settled{}}) // as a run starts it
			s := settler{in: stuckIn{index: stuckIndex(start, tc.stuck, nil), start: start, after: time.Minute, dryRun: tc.dryRun},
				ledger: ledger, log: log} // no broker, no history: either would panic if asked
			s.settle(context.Background())
			sum := ledger.Summary()
			var got []string
			for _, st := range sum.Settled {
				if st.State != vault.OperationInProgress || !strings.HasPrefix(st.Description, "not settled: ") {
					t.Fatalf("counted %+v", st)
				}
				got = append(got, st.InstanceID)
			}
			want := []string{"s3", "s2", "s1"}[3-tc.stuck:]
			if !slices.Equal(got, want) || sum.Settled == nil || sum.ErrorCount != 0 {
				t.Fatalf("counted %v (%d errors), want %v", got, sum.ErrorCount, want)
			}
		})
	}
}
