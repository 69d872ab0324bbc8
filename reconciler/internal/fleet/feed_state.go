package fleet

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// feedState is what the reconciler keeps of a Director's event feed in
// Vault, so that a restarted daemon goes on from where the last run stopped.
type feedState struct {
	// LastID is the newest event the last complete run read.
	LastID string `json:"last_id"`
	// ResyncedAt is when a complete run last fetched every deployment.
	ResyncedAt time.Time `json:"resynced_at"`
	// Pending are deployments events named that the run could not fetch
	// (quarantined, failing): the next runs treat them as named again.
	Pending []string `json:"pending,omitempty"`
	// LastTaskID is the task feed's mark: every task up to it was read
	// (ended, or just before the oldest one still running).
	LastTaskID int `json:"last_task_id,omitempty"`
	// NoEvents says the Director was found recording no events.
	NoEvents bool `json:"no_events,omitempty"`
	// SeenTaskID is the newest task the last complete run read (the watch
	// between runs looks for a newer one).
	SeenTaskID int `json:"seen_task_id,omitempty"`
}

// maxPending bounds feedState.Pending; beyond it the next run resyncs.
const maxPending = 10000

// save keeps the newest event id (and, after a resync, its time) for the
// next run, with the named deployments the run could not fetch (pending);
// only a complete run saves, so that a change seen by an aborted run is
// seen again.
func (w *watch) save(ctx context.Context, mem memory.StateStore, now time.Time, pending []string) error {
	if !w.loaded || w.report.LastID == "" && w.report.Mode != report.FeedResync {
		return nil
	}
	next := w.state
	if w.report.LastID != "" {
		next.LastID = w.report.LastID
	}
	if w.tasksRead {
		next.LastTaskID, next.SeenTaskID = w.taskMark, max(w.seenTask, w.taskMark)
	}
	next.NoEvents = w.report.NoEvents
	if w.report.Mode == report.FeedResync {
		next.ResyncedAt = now
	}
	next.Pending = pending
	if len(pending) > maxPending { // too many to carry: the next run fetches everything
		next.Pending, next.ResyncedAt = nil, time.Time{}
	}
	if next.LastID == w.state.LastID && next.ResyncedAt.Equal(w.state.ResyncedAt) && slices.Equal(next.Pending, w.state.Pending) &&
		next.LastTaskID == w.state.LastTaskID && next.SeenTaskID == w.state.SeenTaskID && next.NoEvents == w.state.NoEvents {
		return nil
	}
	if err := mem.WriteState(ctx, w.doc, next); err != nil {
		return fmt.Errorf("writing the feed state: %w", err)
	}
	return nil
}
