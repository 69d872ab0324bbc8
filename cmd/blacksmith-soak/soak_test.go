package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
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

// TestSchedule holds the faults inside their span, in order, evenly apart,
// the Vault kill during the upgrade wave after the wave.
func TestSchedule(t *testing.T) {
	span := 9 * time.Minute
	f := schedule(span)
	if len(f) != 9 {
		t.Fatalf("%d faults, want 9", len(f))
	}
	at := map[string]int{}
	for i := range f {
		at[f[i].name] = i
		if i > 0 && f[i].at-f[i-1].at != span/9 {
			t.Errorf("%s at %s after %s at %s", f[i].name, f[i].at, f[i-1].name, f[i-1].at)
		}
	}
	if last := f[len(f)-1].at; last >= span {
		t.Errorf("the last fault at %s, past the span %s", last, span)
	}
	if at["vault-kill-active-in-upgrade"] != at["upgrade-wave-director-storm"]+1 {
		t.Errorf("the kill of the active node does not follow the upgrade wave: %v", at)
	}
}

// TestRaisedCatalog holds the upgrade wave's catalog: redis-small at 2.0.0
// with a changed template, the source catalog untouched.
func TestRaisedCatalog(t *testing.T) {
	from := filepath.Join("..", "..", "manifests", "catalog")
	before, err := os.ReadFile(filepath.Join(from, "redis", "small", "plan.yml"))
	if err != nil {
		t.Fatal(err)
	}
	to, err := raisedCatalog(from, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := os.ReadFile(filepath.Join(to, "redis", "small", "plan.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plan), "  version: 2.0.0\n") || strings.Contains(string(plan), "  version: 1.0.0\n") {
		t.Errorf("redis-small's plan not raised to 2.0.0:\n%s", plan)
	}
	manifest, err := os.ReadFile(filepath.Join(to, "redis", "small", "manifest.yml"))
	if err != nil || !strings.Contains(string(manifest), "templates: \"2.0.0\"") {
		t.Errorf("redis-small's manifest unchanged (%v)", err)
	}
	after, _ := os.ReadFile(filepath.Join(from, "redis", "small", "plan.yml"))
	if string(after) != string(before) {
		t.Error("the source catalog changed")
	}
}

// TestFigures holds a fault's figures to the OSB errors and retries in its
// window (and the 30 s after it), the runs that failed in it and the first
// run that succeeded after it.
func TestFigures(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	s := &soak{ledger: &ledger{errorsAt: map[int64]int{start.Unix() - 1: 5, start.Unix() + 2: 2, start.Unix() + 40: 1, start.Unix() + 100: 7},
		retriesAt: map[int64]int{start.Unix() + 3: 4}}}
	f := &fault{name: "x", start: start, end: start.Add(20 * time.Second)}
	runs := []runSummary{
		{StartedAt: start.Add(5 * time.Second), DurationSeconds: 2, Result: "failure"},
		{StartedAt: start.Add(30 * time.Second), DurationSeconds: 4, Result: "partial"},
		{StartedAt: start.Add(-time.Minute), DurationSeconds: 1, Result: "success"},
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(s.figures(f, runs)), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"seconds": 20, "osb_error_seconds": 2, "osb_errors": 3, "osb_retries": 4, "runs_failed": 1, "recovered_s": 14}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s %v, want %v (%v)", k, got[k], w, got)
		}
	}
}

// TestRetirement holds the retirement figures to each instance once,
// whatever the runs that report its step, a step that failed not counted,
// and the proof of the newest run that read the platform.
func TestRetirement(t *testing.T) {
	var runs []runSummary
	for _, raw := range []string{ // newest first
		`{"platform":{"state":"unknown"}}`,
		`{"platform":{"state":"known","orphan_deployments":[{"instance_id":"a","reads":4}],"stopped":[{"instance_id":"a"}],"deleted":[{"instance_id":"b","error":"task failed"}]}}`,
		`{"platform":{"state":"known","orphan_deployments":[{"instance_id":"a","reads":3}],"stopped":[{"instance_id":"a"},{"instance_id":"c"}],"refused":"too many"}}`,
		`{}`,
	} {
		var r runSummary
		if err := json.Unmarshal([]byte(raw), &r); err != nil {
			t.Fatal(err)
		}
		runs = append(runs, r)
	}
	f := retirement(runs)
	if f.Stopped != 2 || f.Deleted != 0 || f.Unread != 1 || len(f.Refused) != 1 || f.LastProofs["a"] != 4 {
		t.Errorf("retirement %+v: want 2 stopped (a, c), none deleted, 1 run unread, 1 refusal, a's last proof 4 reads", f)
	}
}
