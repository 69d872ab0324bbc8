package run

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The orphaner flags an entry whose deployment is gone, and says why not
// the others: one the run matched, one whose deployment is listed (even
// unmatched or locked), one out of scope, one already flagged, one whose
// Director is out of the run (counted unknown unless already an orphan),
// one whose broker operation is in progress, one within the grace period,
// one whose deployment has a Director task in flight.
func TestOrphanerFlagsOnlyWhatIsSurelyGone(t *testing.T) {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	old, recent := start.Add(-time.Hour).Unix(), start.Add(-time.Minute).Unix()
	inProgress := &vault.Operation{Type: "update", State: vault.OperationInProgress}
	index := map[string]*vault.Record{
		"matched":        {PlanID: "p", Created: old},
		"listed":         {PlanID: "p", Created: old},
		"locked":         {PlanID: "p", Created: old},
		"other-plan":     {PlanID: "q", Created: old},
		"orphan":         {PlanID: "p", Created: old, Orphaned: true},
		"orphan-down":    {PlanID: "p", Created: old, Orphaned: true, Director: "down"},
		"director-down":  {PlanID: "p", Created: old, Director: "down"},
		"operating":      {PlanID: "p", Created: old, LastOperation: inProgress},
		"young":          {PlanID: "p", Created: recent},
		"gone":           {PlanID: "p", Created: old, Director: "up"},
		"undated":        {PlanID: "p"},
		"tasked":         {PlanID: "p", Created: old},
		"operation-done": {PlanID: "p", Created: old, LastOperation: &vault.Operation{Type: "update", State: vault.OperationSucceeded}},
	}
	listed := []bosh.Deployment{{Name: "p-listed"}, {Name: "p-locked", Locked: true}, {Name: "foreign"}}
	base := map[string]orphanWhy{
		"matched": orphanClaimed, "listed": orphanListed, "locked": orphanListed, "other-plan": orphanFlagged,
		"orphan": orphanAlready, "orphan-down": orphanAlready, "director-down": orphanUnknown, "operating": orphanBusy,
		"young": orphanYoung, "gone": orphanFlagged, "undated": orphanFlagged, "tasked": orphanTask, "operation-done": orphanFlagged,
	}
	with := func(changes map[string]orphanWhy) map[string]orphanWhy {
		out := maps.Clone(base)
		maps.Copy(out, changes)
		return out
	}
	for _, tc := range []struct {
		name    string
		scope   report.Scope
		grace   time.Duration
		busy    []string // deployments with a task in flight
		want    map[string]orphanWhy
		unknown int
	}{
		{name: "a whole run", grace: 10 * time.Minute, busy: []string{"p-tasked", "p-listed", "p-nothing"}, want: base, unknown: 1},
		{name: "no task in flight", grace: 10 * time.Minute, want: with(map[string]orphanWhy{"tasked": orphanFlagged}), unknown: 1},
		{name: "no grace period", busy: []string{"p-tasked"}, want: with(map[string]orphanWhy{"young": orphanFlagged}), unknown: 1},
		{name: "a run scoped to a plan", scope: report.Scope{Plan: "q"}, grace: 10 * time.Minute,
			want: map[string]orphanWhy{"other-plan": orphanFlagged}},
		{name: "a run scoped to an instance", scope: report.Scope{Instance: "director-down"}, grace: 10 * time.Minute,
			want: map[string]orphanWhy{"director-down": orphanUnknown}, unknown: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := orphanIn{index: index, claimed: func(id string) bool { return id == "matched" },
				outOfRun: func(rec *vault.Record) bool { return rec.Director == "down" }, scope: tc.scope, start: start, grace: tc.grace}
			in = in.with(listed)
			busy := map[string]bool{}
			for _, name := range tc.busy {
				busy[name] = true
			}
			candidates, unknown := in.candidates()
			flag, waiting := in.flagged(candidates, busy)
			got := map[string]orphanWhy{}
			for id, rec := range index {
				if why := in.why(id, rec); why != orphanOutOfScope {
					got[id] = why
				}
			}
			for _, id := range waiting {
				got[id] = orphanTask
			}
			for id := range index {
				if got[id] != tc.want[id] {
					t.Errorf("%s: %q, want %q", id, got[id], tc.want[id])
				}
			}
			if unknown != tc.unknown {
				t.Errorf("%d unknown, want %d", unknown, tc.unknown)
			}
			var want []string
			for id, why := range tc.want {
				if why == orphanFlagged {
					want = append(want, id)
				}
			}
			if slices.Sort(want); !slices.Equal(flag, want) {
				t.Fatalf("flagged %v, want %v, in order", flag, want)
			}
		})
	}
}
