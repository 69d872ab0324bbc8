package run

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The health phase hands the loop the listed deployments of the instances
// the index knows, except the retiring; busy when a task or an operation
// holds them; and, of the unhealthy entries, says which go.
func TestHandingHandsTheLoopWhatTheRunSaw(t *testing.T) {
	inProgress := &vault.Operation{State: vault.OperationInProgress}
	index := map[string]*vault.Record{
		"ok":       {PlanID: "p"},
		"retiring": {PlanID: "p", Retiring: &vault.Retirement{}},
		"busy":     {PlanID: "p", LastOperation: inProgress},
		"locked":   {PlanID: "p"},
		"unlisted": {PlanID: "p"},
	}
	deps := []bosh.Deployment{{Name: "p-ok"}, {Name: "p-retiring"}, {Name: "p-busy"}, {Name: "p-locked", Locked: true}, {Name: "foreign"}}
	seen := newListing(&vault.Index{Records: index}).with(deps)
	unhealthy := map[string]report.UnhealthyInstance{
		"ok":       {Deployment: "p-ok"},
		"retiring": {Deployment: "p-retiring"},
		"unlisted": {Deployment: "p-unlisted"},
		"gone":     {Deployment: "p-gone"},
	}
	at := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name      string
		allListed bool
		gone      []string
		rep       report.HealthReport
	}{
		{name: "every Director listed", allListed: true, gone: []string{"gone", "retiring", "unlisted"},
			rep: report.HealthReport{Handed: 3, Busy: 2, Named: 1, Gone: 3, Unhealthy: 1}},
		{name: "a Director did not list: an unlisted deployment's entry stays", gone: []string{"gone", "retiring"},
			rep: report.HealthReport{Handed: 3, Busy: 2, Named: 1, Gone: 2, Unhealthy: 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var tracker health.Tracker
			tracker.Set(health.Doc{Unhealthy: maps.Clone(unhealthy)})
			owner := func(name string) string { return "d-" + name }
			rep := handing{tracker: &tracker}.Run(handingIn{seen: seen, owner: owner, allListed: c.allListed,
				named: []string{"p-ok"}, runID: "r1", at: at})
			if rep == nil || *rep != c.rep {
				t.Fatalf("report %+v, want %+v", rep, c.rep)
			}
			h, gen := tracker.Handed()
			if gen != 1 || h.RunID != "r1" || !h.At.Equal(at) || !slices.Equal(h.Named, []string{"p-ok"}) {
				t.Fatalf("handover %d: %+v", gen, h)
			}
			want := map[string]health.Target{
				"p-ok":     {Instance: "ok", Director: "d-p-ok"},
				"p-busy":   {Instance: "busy", Director: "d-p-busy", Busy: true},
				"p-locked": {Instance: "locked", Director: "d-p-locked", Busy: true},
			}
			if !maps.Equal(h.Targets, want) {
				t.Fatalf("targets %+v, want %+v", h.Targets, want)
			}
			if slices.Sort(h.Gone); !slices.Equal(h.Gone, c.gone) {
				t.Fatalf("gone %v, want %v", h.Gone, c.gone)
			}
		})
	}
}
