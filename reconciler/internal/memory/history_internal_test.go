package memory

import (
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// A history that grew is pruned always with max_age or a small keep, never
// without a retention, and with keep alone for about 1 in pruneSlack of
// the events added to it.
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
	// 1/16 of 20,000 is 1,250, with a standard deviation of ~34.
	if n < 900 || n > 1600 {
		t.Fatalf("pruned for %d of %d events with keep 200, want about %d", n, draws, draws/pruneSlack)
	}
}
