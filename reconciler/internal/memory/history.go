package memory

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// HistoryStore keeps each instance's append-only history in Vault;
// *vault.History has it.
type HistoryStore interface {
	// AppendEvent adds an event to an instance's history (a new document).
	AppendEvent(ctx context.Context, id string, e vault.Event) error
	// PruneEvents drops an instance's events beyond the retention.
	PruneEvents(ctx context.Context, id string, opts vault.HistoryOptions, now time.Time) (int, error)
}

// ActorReconciler names the reconciler in history events.
const ActorReconciler = "reconciler"

// notified are the history kinds that are also notifications, each a
// transition (an orphan that stays one is not announced again).
var notified = map[string]string{
	"orphaned": notify.Orphaned, "unorphaned": notify.Unorphaned, "drift": notify.Drift,
	"conflict": notify.Conflict, "quarantined": notify.Quarantined,
}

// Historian appends a run's history events in the background, with
// Config.MaxConcurrency writers, so that the run never waits for its
// history; a failed append is logged and counted, never a run error. An
// instance whose history grew (other than by its first event) is pruned to
// the retention once, at the end of the run (with keep alone, in some runs
// only: mayPrune). A nil historian (dry run) records nothing.
type Historian struct {
	store    HistoryStore
	notifier ports.Notifier // nil: no notifications
	// directorOf names the Director of instance id in notifications: the
	// one that listed its deployment, else the one its record names.
	directorOf func(id, deployment string) string
	runID      string
	retain     vault.HistoryOptions
	now        func() time.Time
	log        *slog.Logger
	workers    int

	in      chan historyItem
	wg      sync.WaitGroup
	failed  atomic.Int64
	written atomic.Int64

	mu    sync.Mutex
	prune map[string]bool
}

type historyItem struct {
	id string
	e  vault.Event
}

// NewHistorian starts workers writers of run runID's events; notifier (nil:
// none) hears of the transitions, each naming the Director directorOf gives.
func NewHistorian(store HistoryStore, runID string, retain vault.HistoryOptions, workers int, notifier ports.Notifier,
	directorOf func(id, deployment string) string, now func() time.Time, log *slog.Logger) *Historian {
	h := &Historian{store: store, runID: runID, retain: retain, now: now, log: log, notifier: notifier, directorOf: directorOf,
		workers: max(workers, 1), in: make(chan historyItem, 256), prune: map[string]bool{}}
	for range h.workers {
		h.wg.Go(func() {
			for it := range h.in {
				h.append(it)
			}
		})
	}
	return h
}

// Add queues an event of instance id (its RunID and Actor filled in).
func (h *Historian) Add(id string, e vault.Event) {
	if h == nil || id == "" {
		return
	}
	e.RunID = h.runID
	if e.Actor == "" {
		e.Actor = ActorReconciler
	}
	if e.Time.IsZero() {
		e.Time = h.now().UTC()
	}
	if t, ok := notified[e.Kind]; ok && h.notifier != nil && e.Details["transition"] != "no" {
		h.notifier.Notify(notify.Event{Type: t, InstanceID: id, Deployment: e.Deployment, Director: h.DirectorName(id, e.Deployment),
			Reason: e.Message, RunID: h.runID, Time: e.Time})
	}
	delete(e.Details, "transition")
	h.in <- historyItem{id: id, e: e}
}

// DirectorName is the Director notifications name for instance id.
func (h *Historian) DirectorName(id, deployment string) string { return h.directorOf(id, deployment) }

// Notify tells the notifier of e (nil historian or notifier: nobody).
func (h *Historian) Notify(e notify.Event) {
	if h != nil && h.notifier != nil {
		h.notifier.Notify(e)
	}
}

// append writes one event; ctx is not the run's: a history event of a
// change made is written even when the run is cancelled.
func (h *Historian) append(it historyItem) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.store.AppendEvent(ctx, it.id, it.e); err != nil {
		h.failed.Add(1)
		h.log.Warn("could not record a history event", "instance", it.id, "kind", it.e.Kind, "error", err)
		return
	}
	h.written.Add(1)
	if it.e.Kind != "created" && it.e.Kind != "restored" && h.mayPrune() {
		h.mu.Lock()
		h.prune[it.id] = true
		h.mu.Unlock()
	}
}

// pruneSlack is how many events, on average, a history pruned to keep
// alone (no max_age) grows by before it is pruned again: each event a run
// adds to it gives it a 1 in pruneSlack chance to be pruned at the end of
// the run (always when keep is at most pruneSlack). Pruning lists the
// history, one Vault read: after every event, a run where 1,000 instances
// changed listed 1,000 histories of a few events, far under keep (200 by
// default), to delete nothing. A history holds then keep + pruneSlack
// events on average at most, rarely ~4 times that many more (the chance is
// drawn anew for each event).
const pruneSlack = 16

// mayPrune says whether an instance whose history grew by an event is
// pruned at the end of the run: always with max_age (an old event goes at
// the next event), with a chance of 1 in pruneSlack with keep alone.
func (h *Historian) mayPrune() bool {
	switch {
	case h.retain.MaxAge > 0:
		return true
	case h.retain.Keep <= 0:
		return false
	default:
		return h.retain.Keep <= pruneSlack || rand.IntN(pruneSlack) == 0
	}
}

// Stop writes what is queued, prunes the histories that grew (with as many
// writers: one after another, a run that changed 1,000 instances spent
// seconds listing their histories) and waits.
func (h *Historian) Stop() {
	if h == nil {
		return
	}
	close(h.in)
	h.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ids := make(chan string)
	var wg sync.WaitGroup
	for range min(h.workers, len(h.prune)) {
		wg.Go(func() {
			for id := range ids {
				if _, err := h.store.PruneEvents(ctx, id, h.retain, h.now()); err != nil {
					h.log.Warn("could not prune an instance's history", "instance", id, "error", err)
				}
			}
		})
	}
	for id := range h.prune {
		ids <- id
	}
	close(ids)
	wg.Wait()
}

// Counts is what the historian wrote and failed to write.
func (h *Historian) Counts() (written, failed int) {
	if h == nil {
		return 0, 0
	}
	return int(h.written.Load()), int(h.failed.Load())
}
