package run

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// A plan whose version is lower than one an instance records is a problem
// of the catalog, naming the plan's file; instances at or below it are not.
func TestVersionProblemsNameThePlanGoneBack(t *testing.T) {
	c := &catalog.Catalog{Services: []catalog.Service{{ID: "s", Name: "s", Plans: []catalog.Plan{
		{ID: "p", Name: "p", Source: "plans/p/plan.yml", MaintenanceInfo: &catalog.MaintenanceInfo{Version: "1.2.0"}},
	}}}}
	for _, tc := range []struct {
		name     string
		recorded string
		problem  string
	}{
		{name: "an instance at the plan's version", recorded: "1.2.0"},
		{name: "an instance below it", recorded: "1.0.0"},
		{name: "an instance above it", recorded: "2.0.0", problem: "plans/p/plan.yml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := newListing(&vault.Index{Records: map[string]*vault.Record{"i1": {PlanID: "p", MaintenanceVersion: tc.recorded}}})
			problems := versionProblems(c, seen)
			switch {
			case tc.problem == "" && len(problems) != 0:
				t.Fatalf("problems %v, want none", problems)
			case tc.problem != "" && (len(problems) != 1 || !strings.Contains(problems[0].Error(), tc.problem) ||
				!strings.HasPrefix(problems[0].Error(), "the catalog: ")):
				t.Fatalf("problems %v, want one naming %s", problems, tc.problem)
			}
		})
	}
}

// Without maintenance_info in the catalog, the phase reports only what is
// behind its Director: an instance whose manifest the run has no copy of
// is unknown (none is fetched for it), an orphaned record's deployment and
// a foreign one are not looked at; the outdated document is not touched
// (its store, nil here, would panic if asked).
func TestOutdatedWithoutVersionsReportsOnlyTheUnknown(t *testing.T) {
	index := map[string]*vault.Record{"a": {PlanID: "p"}, "b": {PlanID: "p"}, "o": {PlanID: "p", Orphaned: true}}
	for _, tc := range []struct {
		name    string
		catalog *catalog.Catalog
		deps    []bosh.Deployment
		unknown int // -1: no section
	}{
		{name: "nothing listed", catalog: nil, unknown: -1},
		{name: "two instances, no copies", catalog: &catalog.Catalog{},
			deps: []bosh.Deployment{{Name: "p-a"}, {Name: "p-b"}, {Name: "p-o"}, {Name: "foreign"}}, unknown: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := slog.New(slog.DiscardHandler)
			o := outdatedLook{catalog: tc.catalog, log: log, now: time.Now,
				behind: behindLook{cache: fleet.NewCache(time.Hour, time.Now), log: log, down: func(string) bool { return false }}}
			seen := newListing(&vault.Index{Records: index}).with(tc.deps)
			rep, problems := o.Run(context.Background(), outdatedIn{seen: seen, deps: tc.deps, runID: "r1"})
			if len(problems) != 0 {
				t.Fatalf("problems %v", problems)
			}
			switch {
			case tc.unknown < 0 && rep != nil:
				t.Fatalf("section %+v, want none", rep)
			case tc.unknown >= 0 && (rep == nil || rep.Behind == nil || rep.Behind.Unknown != tc.unknown || rep.Count != 0):
				t.Fatalf("section %+v, want %d unknown and none outdated", rep, tc.unknown)
			}
		})
	}
}
