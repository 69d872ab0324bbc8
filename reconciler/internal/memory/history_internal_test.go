package memory

import (
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// A history that grew is pruned always with max_age or a small keep, never
// without a retention, and with keep alone in about pruneSlack/keep of the
// runs that add to it.
func TestMayPruneFollowsTheRetention(t *testing.T) {
	for _, c := range []struct {
		retain vault.HistoryOptions
		want   bool
	}{
		{vault.HistoryOptions{}, false},
		{vault.HistoryOptions{MaxAge: time.Hour}, true},
		{vault.HistoryOptions{Keep: 200, MaxAge: time.Hour}, true},
		{vault.HistoryOptions{Keep: 3}, true},
		{vault.HistoryOptions{Keep: pruneSlack}, true},
	} {
		h := &Historian{retain: c.retain}
		for range 200 {
			if got := h.mayPrune(); got != c.want {
				t.Fatalf("mayPrune with %+v = %v, want %v", c.retain, got, c.want)
			}
		}
	}
	h := &Historian{retain: vault.HistoryOptions{Keep: 200}}
	const draws = 20000
	n := 0
	for range draws {
		if h.mayPrune() {
			n++
		}
	}
	// 16/200 of 20,000 is 1,600, with a standard deviation of ~38.
	if n < 1200 || n > 2000 {
		t.Fatalf("pruned in %d of %d runs with keep 200, want about %d", n, draws, draws*pruneSlack/200)
	}
}
