package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// rollWith runs a recreateRoll over n targets where the instances named in
// fail fail, and returns each one's state and the order they started in.
func rollWith(t *testing.T, rr recreateRoll, n int, fail ...string) ([]string, []string, string) {
	t.Helper()
	var mu sync.Mutex
	var started []string
	rr.one = func(_ context.Context, tg recreateTarget, r *recreateResult) {
		mu.Lock()
		started = append(started, tg.id)
		mu.Unlock()
		r.State = recreated
		if slices.Contains(fail, tg.id) {
			r.State = recreateFailed
		}
	}
	targets := make([]recreateTarget, n)
	results := make([]recreateResult, n)
	for i := range targets {
		targets[i].id = fmt.Sprintf("i%d", i)
		results[i].InstanceID = targets[i].id
	}
	stopped := rr.run(context.Background(), targets, results)
	var states []string
	for _, r := range results {
		states = append(states, r.State)
	}
	return states, started, stopped
}

func TestRecreateRollCanariesFirstThenTheRest(t *testing.T) {
	states, started, stopped := rollWith(t, recreateRoll{canaries: 1, maxInFlight: 1}, 3)
	if !slices.Equal(states, []string{recreated, recreated, recreated}) || !slices.Equal(started, []string{"i0", "i1", "i2"}) || stopped != "" {
		t.Fatalf("states %v, started %v, stopped %q", states, started, stopped)
	}
}

func TestRecreateRollStopsAfterAFailedCanary(t *testing.T) {
	states, started, stopped := rollWith(t, recreateRoll{canaries: 1, maxInFlight: 5}, 3, "i0")
	if !slices.Equal(states, []string{recreateFailed, notStarted, notStarted}) || len(started) != 1 || stopped == "" {
		t.Fatalf("states %v, started %v, stopped %q", states, started, stopped)
	}
}

func TestRecreateRollStopsAtMaxFailures(t *testing.T) {
	states, started, stopped := rollWith(t, recreateRoll{canaries: 0, maxInFlight: 1, maxFailures: 1}, 3, "i1")
	if !slices.Equal(states, []string{recreated, recreateFailed, notStarted}) || len(started) != 2 || stopped == "" {
		t.Fatalf("states %v, started %v, stopped %q", states, started, stopped)
	}
	states, _, _ = rollWith(t, recreateRoll{canaries: 0, maxInFlight: 1, maxFailures: 0}, 3, "i0", "i1")
	if !slices.Equal(states, []string{recreateFailed, recreateFailed, recreated}) {
		t.Fatalf("no limit: states %v", states)
	}
}
