package reconciler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// feedStateName is the reconciler's state document that keeps where it
// stopped reading the Director's event log (see Memory).
const feedStateName = "events"

// maxFeedPages bounds the event pages one run reads (200 events each): a
// longer feed is treated as a gap, and the run falls back to cache_ttl.
const maxFeedPages = 50

// feedState is what the reconciler keeps of the event feed in Vault, so
// that a restarted daemon goes on from where the last run stopped.
type feedState struct {
	// LastID is the newest event the last complete run read.
	LastID string `json:"last_id"`
	// ResyncedAt is when a complete run last fetched every deployment.
	ResyncedAt time.Time `json:"resynced_at"`
	// Pending are deployments events named that the run could not fetch
	// (quarantined, failing): the next runs treat them as named again.
	Pending []string `json:"pending,omitempty"`
}

// maxPending bounds feedState.Pending; beyond it the next run resyncs.
const maxPending = 10000

// watch is a run's view of the event feed: which deployments changed since
// the last run, and whether the rest may be trusted.
type watch struct {
	report FeedReport
	named  map[string]bool // deployments the events since the last run name
	state  feedState       // as read at the start of the run
	loaded bool            // the state was read (false: nothing is written back)
	doc    string          // the state document (feedStateName, or one per Director)
}

// feedStateOf is the state document of Director name's feed mark when
// there are several Directors (one Director keeps feedStateName).
func feedStateOf(name string) string { return feedStateName + "-" + name }

// trusts says whether the feed vouches that deployment name did not change
// since the last run.
func (w *watch) trusts(name string) bool {
	return w != nil && w.report.Mode == FeedWatch && !w.named[name]
}

// readWatch reads the feed state from Vault (document doc) and the events since; forced
// says the run fetches everything anyway (the feed is still read, to move
// the mark).
func readWatch(ctx context.Context, mem Memory, dir Director, doc string, now time.Time, resync time.Duration, forced bool) *watch {
	w := &watch{named: map[string]bool{}, doc: doc}
	if _, err := mem.ReadState(ctx, doc, &w.state); err != nil {
		w.fallback(fmt.Sprintf("the feed state could not be read: %v", err))
		return w
	}
	w.loaded = true
	for _, name := range w.state.Pending {
		w.named[name] = true
	}
	newest, err := w.read(ctx, dir)
	w.report.LastID, w.report.Changed = newest, len(w.named)
	switch {
	case errors.Is(err, errGap):
		// Changes may hide in the gap: everything is fetched, and the mark moves on.
		w.resync(err.Error())
	case err != nil:
		w.report.LastID = "" // the next run reads from the same mark
		w.fallback(err.Error())
	case forced:
		w.resync("a forced run fetches every deployment")
	case w.state.ResyncedAt.IsZero() || now.Sub(w.state.ResyncedAt) >= resync:
		w.resync(fmt.Sprintf("resync_period (%s) since the last full fetch", resync))
	default:
		w.report.Mode = FeedWatch
	}
	return w
}

func (w *watch) fallback(reason string) { w.report.Mode, w.report.Reason = FeedFallback, reason }
func (w *watch) resync(reason string)   { w.report.Mode, w.report.Reason = FeedResync, reason }

// emptyLog is the mark of a Director whose event log was empty: every
// event id is after it.
const emptyLog = "0"

// errGap says the feed does not reach back to the last event read.
var errGap = errors.New("gap in the event feed")

// read pages back through the events, newest first, until the last event
// read by the previous run, recording the deployments they name; it
// returns the newest id. A feed that does not reach the last id (pruned
// events, a new Director, more than maxFeedPages pages) is errGap.
func (w *watch) read(ctx context.Context, dir Director) (newest string, err error) {
	last := w.state.LastID
	q := bosh.EventQuery{}
	for page := 0; page < maxFeedPages; page++ {
		events, err := dir.Events(ctx, q)
		w.report.Pages++
		if err != nil {
			return newest, fmt.Errorf("reading the Director's events: %w", err)
		}
		if len(events) == 0 && page == 0 && (last == "" || last == emptyLog) {
			// No event at all: nothing can have been missed; the mark is
			// "before the first event".
			return emptyLog, nil
		}
		if len(events) > 0 && newest == "" {
			newest = events[0].ID
		}
		for _, e := range events {
			if last != "" {
				older, err := bosh.IDBefore(last, e.ID)
				if err != nil {
					return newest, err
				}
				if !older { // e is the last event read, or older: the feed is whole
					return newest, nil
				}
			}
			w.report.Events++
			w.name(e)
		}
		if last == "" {
			return newest, fmt.Errorf("%w: no event read yet (first run, or a new feed state)", errGap)
		}
		if len(events) < bosh.EventsPage {
			return newest, fmt.Errorf("%w: event %s is no longer in the Director's log (pruned, or another Director)", errGap, last)
		}
		q.BeforeID = events[len(events)-1].ID
	}
	return newest, fmt.Errorf("%w: more than %d events since event %s", errGap, maxFeedPages*bosh.EventsPage, last)
}

// name records the deployment an event concerns.
func (w *watch) name(e bosh.Event) {
	if e.Deployment != "" {
		w.named[e.Deployment] = true
	}
	if e.ObjectType == "deployment" && e.ObjectName != "" {
		w.named[e.ObjectName] = true
	}
	w.report.Changed = len(w.named)
}

// save keeps the newest event id (and, after a resync, its time) for the
// next run, with the named deployments the run could not fetch (pending);
// only a complete run saves, so that a change seen by an aborted run is
// seen again.
func (w *watch) save(ctx context.Context, mem Memory, now time.Time, pending []string) error {
	if !w.loaded || w.report.LastID == "" && w.report.Mode != FeedResync {
		return nil
	}
	next := w.state
	if w.report.LastID != "" {
		next.LastID = w.report.LastID
	}
	if w.report.Mode == FeedResync {
		next.ResyncedAt = now
	}
	next.Pending = pending
	if len(pending) > maxPending { // too many to carry: the next run fetches everything
		next.Pending, next.ResyncedAt = nil, time.Time{}
	}
	if next.LastID == w.state.LastID && next.ResyncedAt.Equal(w.state.ResyncedAt) && slices.Equal(next.Pending, w.state.Pending) {
		return nil
	}
	if err := mem.WriteState(ctx, w.doc, next); err != nil {
		return fmt.Errorf("writing the feed state: %w", err)
	}
	return nil
}
