package run

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// keysOf is the quarantined items' keys.
func keysOf(items []report.Quarantined) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.Key())
	}
	return out
}

// The quarantine phase quarantines what failed and releases what the run
// looked at and found in step; an item that may live on a Director out of
// the run is neither (nor one out of the run's scope released); a storm of
// the Directors' transient faults is excused (counted, not quarantined,
// and what was quarantined stays); a quarantine the run could not read is
// left alone; it is written back only when it changed, never in a dry run.
func TestQuarantiningSettlesOnlyWhatTheRunLookedAt(t *testing.T) {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	policy := memory.Policy{Quarantine: config.QuarantineConfig{Backoff: time.Hour, MaxBackoff: 24 * time.Hour}}
	index := map[string]*vault.Record{"i-in": {PlanID: "p", Director: "d1"}, "i-out": {PlanID: "p", Director: "d2"}}
	var deps []bosh.Deployment // p-a... p-j listed, and the instances' deployments
	for c := 'a'; c <= 'j'; c++ {
		deps = append(deps, bosh.Deployment{Name: fmt.Sprintf("p-%c", c)})
	}
	deps = append(deps, bosh.Deployment{Name: "p-i-in"}, bosh.Deployment{Name: "p-i-out"})
	seen := newListing(&vault.Index{Records: index}).with(deps)
	// Director d2 is out of the run: it may hold the deployments named
	// p-out... and the instances it records.
	d2Out := func(deployment string, rec *vault.Record, isInstance bool) bool {
		if isInstance {
			return rec == nil || rec.Director == "d2"
		}
		return strings.HasPrefix(deployment, "p-out")
	}
	allIn := func(string, *vault.Record, bool) bool { return false }
	boom := func(keys ...string) map[string]string {
		out := map[string]string{}
		for _, k := range keys {
			out[k] = "boom"
		}
		return out
	}
	transient := map[string]bool{"deployment p-c": true, "deployment p-d": true}
	for _, c := range []struct {
		name      string
		before    []string // the keys quarantined before the run
		failed    []string
		transient map[string]bool
		mayHold   func(string, *vault.Record, bool) bool
		scope     report.Scope
		notLoaded bool
		dryRun    bool
		// want: nil section when the quarantine is left alone
		section           bool
		added, released   []string
		after             []string
		excused           int
		save              bool
		quarantined, left []string // the history's events: quarantined, released
	}{
		{name: "a failure quarantined, an item in step again released", before: []string{"deployment p-a", "instance i-in"},
			failed: []string{"deployment p-b"}, mayHold: allIn, section: true, added: []string{"deployment p-b"},
			released: []string{"deployment p-a", "instance i-in"}, after: []string{"deployment p-b"}, save: true},
		{name: "a failure again: a longer backoff", before: []string{"deployment p-a"}, failed: []string{"deployment p-a"}, mayHold: allIn,
			section: true, added: []string{"deployment p-a"}, after: []string{"deployment p-a"}, save: true},
		{name: "an item whose Director may be out of the run is neither quarantined nor released",
			before: []string{"deployment p-out-1", "instance i-out", "deployment p-a"}, failed: []string{"deployment p-out-2", "instance i-out"},
			mayHold: d2Out, section: true, released: []string{"deployment p-a"},
			after: []string{"deployment p-out-1", "instance i-out"}, save: true},
		{name: "nothing out of the run: the same items settled", before: []string{"deployment p-out-1", "instance i-out"},
			failed: []string{"deployment p-out-2", "instance i-out"}, mayHold: allIn, section: true,
			added: []string{"deployment p-out-2", "instance i-out"}, released: []string{"deployment p-out-1"},
			after: []string{"deployment p-out-2", "instance i-out"}, save: true},
		{name: "a storm of transient faults is excused", before: []string{"deployment p-c"}, failed: []string{"deployment p-c", "deployment p-d"},
			transient: transient, mayHold: allIn, section: true, after: []string{"deployment p-c"}, excused: 2},
		{name: "a storm excuses only the transient", failed: []string{"deployment p-c", "deployment p-d", "deployment p-e"},
			transient: transient, mayHold: allIn, section: true, added: []string{"deployment p-e"}, after: []string{"deployment p-e"},
			excused: 2, save: true},
		{name: "one transient fault is no storm", failed: []string{"deployment p-c"}, transient: map[string]bool{"deployment p-c": true},
			mayHold: allIn, section: true, added: []string{"deployment p-c"}, after: []string{"deployment p-c"}, save: true},
		{name: "a scoped run releases nothing out of its scope", before: []string{"deployment p-a", "deployment p-b"},
			scope: report.Scope{Deployment: "p-a"}, mayHold: allIn, section: true, released: []string{"deployment p-a"},
			after: []string{"deployment p-b"}, save: true},
		{name: "a quarantine not read is left alone", before: []string{"deployment p-a"}, failed: []string{"deployment p-b"},
			notLoaded: true, mayHold: allIn, after: []string{"deployment p-a"}},
		{name: "a dry run saves nothing", before: []string{"deployment p-a"}, failed: []string{"deployment p-b"}, dryRun: true,
			mayHold: allIn, section: true, added: []string{"deployment p-b"}, released: []string{"deployment p-a"},
			after: []string{"deployment p-b"}},
		{name: "nothing changed, nothing saved", mayHold: allIn, section: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			quar := memory.NewQuarantine(policy, start, report.RunOptions{})
			earlier := start.Add(-48 * time.Hour) // an earlier run quarantined them: their backoffs have expired
			quar.Settle(earlier, boom(c.before...), nil, seen.listed, func(string) string { return "" }, func(string) bool { return true })
			var events []string
			q := quarantining{quar: quar, record: func(id string, e vault.Event) { events = append(events, e.Kind+" "+id+e.Deployment) },
				now: func() time.Time { return start }, log: slog.New(slog.DiscardHandler)}
			out := q.Run(quarantineIn{seen: seen, owners: ownersOf(t, index, c.scope), failed: boom(c.failed...), transient: c.transient,
				mayHold: c.mayHold, loaded: !c.notLoaded, dryRun: c.dryRun})
			if got := keysOf(quar.List()); !slices.Equal(got, c.after) {
				t.Errorf("quarantined after the run %v, want %v", got, c.after)
			}
			if (out != nil) != c.section {
				t.Fatalf("section %+v, want one: %v", out, c.section)
			}
			if out == nil {
				if len(events) > 0 {
					t.Errorf("told %v", events)
				}
				return
			}
			var s report.Summary
			out.count(&s)
			if got := keysOf(s.NewlyQuarantined); !slices.Equal(got, c.added) {
				t.Errorf("newly quarantined %v, want %v", got, c.added)
			}
			if got := keysOf(s.Released); !slices.Equal(got, c.released) {
				t.Errorf("released %v, want %v", got, c.released)
			}
			if s.QuarantinedTotal != len(c.after) || s.Excused != c.excused || out.save != c.save {
				t.Errorf("total %d, excused %d, save %v; want %d, %d, %v", s.QuarantinedTotal, s.Excused, out.save, len(c.after),
					c.excused, c.save)
			}
			for _, it := range s.NewlyQuarantined {
				if !it.LastFailedAt.Equal(start) || !it.NextAttempt.After(start) {
					t.Errorf("%s: failed at %v, next attempt %v", it.Key(), it.LastFailedAt, it.NextAttempt)
				}
			}
			if want := len(c.added) + len(c.released); len(events) != want {
				t.Errorf("told %v, want %d events", events, want)
			}
		})
	}
}
