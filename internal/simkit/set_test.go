package simkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// The first failure added that matches a request picks it; one with a
// Count is counted down and leaves the set at 0; List copies what is left.
func TestFailureSetPicksInOrderAndCountsDown(t *testing.T) {
	var s simkit.FailureSet
	s.Add(simkit.Failure{Endpoint: "/deployments/:name", Deployment: "a", Status: 503, Count: 2})
	s.Add(simkit.Failure{Endpoint: "/deployments/:name", Status: 500})
	for i, want := range []struct {
		name   string
		status int
	}{{"a", 503}, {"b", 500}, {"a", 503}, {"a", 500}} {
		f, ok := s.Pick("GET", "/deployments/:name", want.name)
		if !ok || f.Status != want.status {
			t.Fatalf("request %d (%s): %+v %v, want status %d", i, want.name, f, ok, want.status)
		}
	}
	list := s.List()
	if len(list) != 1 || list[0].Status != 500 {
		t.Fatalf("left: %+v, want the unlimited one", list)
	}
	list[0].Status = 418
	if s.List()[0].Status != 500 {
		t.Fatal("List handed out the set's own failure")
	}
	if _, ok := s.Pick("GET", "/tasks", ""); ok {
		t.Fatal("a failure of another route picked a request")
	}
	s.Set(nil)
	if _, ok := s.Pick("GET", "/deployments/:name", "a"); ok || len(s.List()) != 0 {
		t.Fatal("Set(nil) left failures")
	}
}

// Sleep waits the whole delay, or stops when its context ends.
func TestSleepStopsWithItsContext(t *testing.T) {
	if !simkit.Sleep(context.Background(), 0) {
		t.Fatal("no delay is waited whole")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if simkit.Sleep(ctx, time.Hour) {
		t.Fatal("a cancelled sleep said it waited an hour")
	}
}
