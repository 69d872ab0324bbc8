package run

import (
	"regexp"
	"slices"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Instance ids whose deployments' names tell them (plan "small" of service
// "redis", or "large"), and one a deployment's name does not tell: its
// index record does.
const (
	uuidA = "0a4b5c6d-1111-4222-8333-944455556666"
	uuidB = "0b4b5c6d-1111-4222-8333-944455556666"
	uuidL = "0c4b5c6d-1111-4222-8333-944455556666"
)

// ownersOf is who owns the deployments of index, as the run tells them,
// within scope.
func ownersOf(t *testing.T, index map[string]*vault.Record, scope report.Scope) owners {
	t.Helper()
	m, err := match.New(&catalog.Catalog{Services: []catalog.Service{{ID: "redis", Plans: []catalog.Plan{
		{ID: "small", ServiceID: "redis"}, {ID: "large", ServiceID: "redis"}}}}}, config.ReconcilerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	seen := newListing(&vault.Index{Records: index})
	return owners{scope: scope, matcher: m, index: seen.index, byDep: seen.byDep}
}

// namesOf is the deployments' names.
func namesOf(deps []bosh.Deployment) []string {
	out := []string{}
	for _, d := range deps {
		out = append(out, d.Name)
	}
	return out
}

// The choice keeps the listed deployments that no ignore pattern names and
// that are within the run's scope (a deployment neither its name nor the
// index tells the owner of is out of any scope but its own), counting the
// ignored apart from those out of scope; a scoped run that is forced, or a
// resync, drops its chosen deployments' cached copies (a whole run empties
// the cache instead, elsewhere: it forgets none here).
func TestChoiceKeepsTheRunsDeploymentsAndCountsTheRest(t *testing.T) {
	index := map[string]*vault.Record{uuidL: {PlanID: "large", ServiceID: "redis", DeploymentName: "legacy-redis"}}
	deps := []bosh.Deployment{{Name: "small-" + uuidA}, {Name: "large-" + uuidB}, {Name: "legacy-redis"}, {Name: "cf"},
		{Name: "cf-rabbit"}, {Name: "concourse"}}
	ignore := []*regexp.Regexp{regexp.MustCompile(`^cf(-|$)`)}
	all := []string{"small-" + uuidA, "large-" + uuidB, "legacy-redis", "concourse"}
	large := []string{"large-" + uuidB, "legacy-redis"}
	for _, c := range []struct {
		name                      string
		ignore                    []*regexp.Regexp
		scope                     report.Scope
		force                     bool
		mode                      string
		chosen, forget            []string
		seen, ignored, outOfScope int
	}{
		{name: "a whole run, nothing ignored", mode: report.FeedWatch, chosen: namesOf(deps), seen: 6},
		{name: "a whole run, the ignored left out", ignore: ignore, mode: report.FeedWatch, chosen: all, seen: 6, ignored: 2},
		{name: "a whole forced resync forgets nothing here", ignore: ignore, force: true, mode: report.FeedResync, chosen: all,
			seen: 6, ignored: 2},
		{name: "a plan's scope, by name or by the index", ignore: ignore, scope: report.Scope{Plan: "large"}, mode: report.FeedWatch,
			chosen: large, seen: 6, ignored: 2, outOfScope: 2},
		{name: "a forced scoped run forgets its deployments' copies", ignore: ignore, scope: report.Scope{Plan: "large"}, force: true,
			mode: report.FeedWatch, chosen: large, forget: large, seen: 6, ignored: 2, outOfScope: 2},
		{name: "a scoped resync forgets its deployments' copies", ignore: ignore, scope: report.Scope{Service: "redis"},
			mode: report.FeedResync, chosen: all[:3], forget: all[:3], seen: 6, ignored: 2, outOfScope: 1},
		{name: "an ignored deployment in scope is ignored, not out of scope", ignore: ignore, scope: report.Scope{Deployment: "cf"},
			force: true, mode: report.FeedWatch, chosen: []string{}, seen: 6, ignored: 2, outOfScope: 4},
		{name: "a deployment's own scope: an owner unknown", ignore: ignore, scope: report.Scope{Deployment: "concourse"},
			mode: report.FeedResync, chosen: []string{"concourse"}, forget: []string{"concourse"}, seen: 6, ignored: 2, outOfScope: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			ch := choice{ignore: c.ignore}.Run(choiceIn{deps: deps, owners: ownersOf(t, index, c.scope), force: c.force, mode: c.mode})
			if got := namesOf(ch.deps); !slices.Equal(got, c.chosen) {
				t.Errorf("chosen %v, want %v", got, c.chosen)
			}
			if !slices.Equal(ch.forget, c.forget) {
				t.Errorf("forgotten %v, want %v", ch.forget, c.forget)
			}
			var s report.Summary
			ch.count(&s)
			if got := [3]int{s.DeploymentsSeen, s.Ignored, s.OutOfScope}; got != [3]int{c.seen, c.ignored, c.outOfScope} {
				t.Errorf("seen, ignored, out of scope %v, want %v", got, [3]int{c.seen, c.ignored, c.outOfScope})
			}
		})
	}
}
