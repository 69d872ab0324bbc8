package sim

import (
	"sync/atomic"
	"time"
)

// Knobs are the settings tests turn at run time (Director.Knobs): latency,
// task duration, token lifetime, and how many events are kept. Its methods
// are safe for concurrent use.
type Knobs struct {
	latencyNS, taskDurationNS, tokenTTLNS atomic.Int64
	// noEvents: the Director records no event (director.events.record_events false).
	noEvents atomic.Bool

	db *store // the event log, whose size SetEventsKept sets
}

// newKnobs are the knobs set as opts says.
func newKnobs(opts Options, db *store) *Knobs {
	k := &Knobs{db: db}
	k.latencyNS.Store(int64(opts.Latency))
	k.taskDurationNS.Store(int64(opts.TaskDuration))
	k.tokenTTLNS.Store(int64(opts.TokenTTL))
	k.noEvents.Store(opts.NoEvents)
	return k
}

func (k *Knobs) latency() time.Duration      { return time.Duration(k.latencyNS.Load()) }
func (k *Knobs) taskDuration() time.Duration { return time.Duration(k.taskDurationNS.Load()) }
func (k *Knobs) tokenTTL() time.Duration     { return time.Duration(k.tokenTTLNS.Load()) }

// SetLatency sets the delay added to every request (except /_sim).
func (k *Knobs) SetLatency(l time.Duration) { k.latencyNS.Store(int64(max(l, 0))) }

// SetTaskDuration sets how long tasks created from now on stay processing.
func (k *Knobs) SetTaskDuration(t time.Duration) { k.taskDurationNS.Store(int64(max(t, 0))) }

// SetTokenTTL sets the lifetime of tokens issued from now on (uaa mode).
func (k *Knobs) SetTokenTTL(ttl time.Duration) {
	if ttl > 0 {
		k.tokenTTLNS.Store(int64(ttl))
	}
}

// SetEventsKept sets how many events GET /events can reach (at least 1;
// smaller values are ignored) and drops the older ones at once. Like the
// Director's cleanup, it also keeps every event from the oldest start event
// that a kept end event names as its parent.
func (k *Knobs) SetEventsKept(n int) {
	if n < 1 {
		return
	}
	k.db.mu.Lock()
	defer k.db.mu.Unlock()
	k.db.events.setKept(n)
}

// EventsKept returns how many events are kept (see SetEventsKept).
func (k *Knobs) EventsKept() int {
	k.db.mu.RLock()
	defer k.db.mu.RUnlock()
	return k.db.events.kept
}
