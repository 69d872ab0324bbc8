package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/ids"
)

// TestAnswers holds the soak's reading of an OSB answer: what a platform
// can act on, and what counts as an error it saw.
func TestAnswers(t *testing.T) {
	cases := []struct {
		a                  answer
		actionable, failed bool
	}{
		{answer{status: http.StatusAccepted, body: []byte(`{"operation":"x"}`)}, true, false},
		{answer{status: http.StatusOK, body: nil}, true, false},
		{answer{status: http.StatusGone, body: []byte(`{}`)}, true, false},
		{answer{status: http.StatusUnprocessableEntity, body: []byte(`{"error":"ConcurrencyError"}`)}, true, true},
		{answer{status: http.StatusInternalServerError, body: []byte(`{"description":"vault unavailable"}`)}, true, true},
		{answer{status: http.StatusBadGateway, body: []byte(`<html>bad gateway</html>`)}, false, true},
		{answer{status: 0}, false, true},
	}
	for _, c := range cases {
		if got := c.a.actionable(); got != c.actionable {
			t.Errorf("%d %s: actionable %t, want %t", c.a.status, c.a.body, got, c.actionable)
		}
		if got := c.a.failed(); got != c.failed {
			t.Errorf("%d %s: failed %t, want %t", c.a.status, c.a.body, got, c.failed)
		}
	}
}

// TestNewID holds the soak's instance ids to what the broker accepts and
// what the checks read back from a deployment's name.
func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := newID()
		if msg := ids.Instance(id); msg != "" {
			t.Fatalf("%s: %s", id, msg)
		}
		if got := instanceOf.FindString("redis-small-" + id); got != id {
			t.Fatalf("the instance of redis-small-%s read as %q", id, got)
		}
		if seen[id] {
			t.Fatalf("%s twice", id)
		}
		seen[id] = true
	}
}

// TestSchedule holds the faults inside their span, in order, one step apart.
func TestSchedule(t *testing.T) {
	span := 6 * time.Minute
	f := schedule(span)
	if len(f) != 6 {
		t.Fatalf("%d faults, want 6", len(f))
	}
	for i := 1; i < len(f); i++ {
		if f[i].at-f[i-1].at != span/6 {
			t.Errorf("%s at %s after %s at %s", f[i].name, f[i].at, f[i-1].name, f[i-1].at)
		}
	}
	if last := f[len(f)-1].at; last >= span {
		t.Errorf("the last fault at %s, past the span %s", last, span)
	}
}
