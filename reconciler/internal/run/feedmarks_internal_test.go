package run

import (
	"fmt"
	"slices"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The deployments a feed's mark keeps named for the next run are those its
// events named that are still listed and that this run did not fetch,
// sorted (the mark is written only when it changes).
func TestFeedMarksKeepTheListedNotFetched(t *testing.T) {
	var deps []bosh.Deployment
	for i := range 30 {
		deps = append(deps, bosh.Deployment{Name: fmt.Sprintf("d%02d", i)})
	}
	seen := newListing(&vault.Index{}).with(deps)
	named := func(names ...string) map[string]bool {
		out := map[string]bool{}
		for _, n := range names {
			out[n] = true
		}
		return out
	}
	var many, odd []string // every listed one, newest first; the odd ones
	for i := 29; i >= 0; i-- {
		many = append(many, fmt.Sprintf("d%02d", i))
	}
	for i := 1; i < 30; i += 2 {
		odd = append(odd, fmt.Sprintf("d%02d", i))
	}
	for _, c := range []struct {
		name    string
		named   map[string]bool
		fetched map[string]bool
		want    []string
	}{
		{name: "nothing named", named: named(), want: nil},
		{name: "named and fetched: not pending", named: named("d01", "d02"), fetched: named("d01", "d02"), want: nil},
		{name: "named, not fetched: pending", named: named("d02", "d01"), fetched: named("d02"), want: []string{"d01"}},
		{name: "named but no longer listed: not pending", named: named("gone", "d03"), want: []string{"d03"}},
		{name: "many, sorted", named: named(many...), fetched: named(slices.DeleteFunc(slices.Clone(many), func(n string) bool {
			return slices.Contains(odd, n)
		})...), want: odd},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := feedMarksIn{seen: seen, fetched: func(name string) bool { return c.fetched[name] }}
			if got := in.pending(c.named); !slices.Equal(got, c.want) {
				t.Fatalf("pending %v, want %v", got, c.want)
			}
		})
	}
}
