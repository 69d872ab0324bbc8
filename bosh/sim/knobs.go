package sim

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// knobs are the settings tests turn at run time.
type knobs struct {
	latencyNS, taskDurationNS, tokenTTLNS atomic.Int64
	// noEvents: the Director records no event (director.events.record_events false).
	noEvents atomic.Bool

	mu       sync.Mutex
	failures []*Failure
}

func (k *knobs) init(opts Options) {
	k.latencyNS.Store(int64(opts.Latency))
	k.taskDurationNS.Store(int64(opts.TaskDuration))
	k.tokenTTLNS.Store(int64(opts.TokenTTL))
	k.noEvents.Store(opts.NoEvents)
}

func (k *knobs) latency() time.Duration      { return time.Duration(k.latencyNS.Load()) }
func (k *knobs) taskDuration() time.Duration { return time.Duration(k.taskDurationNS.Load()) }
func (k *knobs) tokenTTL() time.Duration     { return time.Duration(k.tokenTTLNS.Load()) }

// pick returns the failure that affects a request, counting it down.
func (k *knobs) pick(method, tmpl, name string) (Failure, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for i, f := range k.failures {
		if !f.Matches(method, tmpl, name) || (f.Rate > 0 && f.Rate < 1 && rand.Float64() >= f.Rate) {
			continue
		}
		picked := *f
		if f.Count > 0 {
			if f.Count--; f.Count == 0 {
				k.failures = append(k.failures[:i:i], k.failures[i+1:]...)
			}
		}
		return picked, true
	}
	return Failure{}, false
}

// SetLatency sets the delay added to every request (except /_sim).
func (d *Director) SetLatency(l time.Duration) { d.knobs.latencyNS.Store(int64(max(l, 0))) }

// SetTaskDuration sets how long tasks created from now on stay processing.
func (d *Director) SetTaskDuration(t time.Duration) { d.knobs.taskDurationNS.Store(int64(max(t, 0))) }

// SetTokenTTL sets the lifetime of tokens issued from now on (uaa mode).
func (d *Director) SetTokenTTL(ttl time.Duration) {
	if ttl > 0 {
		d.knobs.tokenTTLNS.Store(int64(ttl))
	}
}

// SetEventsKept sets how many events GET /events can reach (at least 1;
// smaller values are ignored) and drops the older ones at once. Like the
// Director's cleanup, it also keeps every event from the oldest start event
// that a kept end event names as its parent.
func (d *Director) SetEventsKept(n int) {
	if n < 1 {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.events.setKept(n)
}

// EventsKept returns how many events are kept (see SetEventsKept).
func (d *Director) EventsKept() int {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.events.kept
}

// InjectFailure adds a failure; the first added failure that picks a
// request decides what happens to it. A failure with a rate outside 0..1, a
// status outside 200..599 (0 = 500), or a negative delay or count is
// refused with an error matching ErrBadOptions.
func (d *Director) InjectFailure(f Failure) error {
	if err := checkFailure(&f); err != nil {
		return err
	}
	d.knobs.mu.Lock()
	defer d.knobs.mu.Unlock()
	d.knobs.failures = append(d.knobs.failures, &f)
	return nil
}

// setFailures replaces every failure with fs, which are valid.
func (k *knobs) setFailures(fs []Failure) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.failures = nil
	for _, f := range fs {
		k.failures = append(k.failures, &f)
	}
}

// ClearFailures removes every injected failure.
func (d *Director) ClearFailures() {
	d.knobs.mu.Lock()
	defer d.knobs.mu.Unlock()
	d.knobs.failures = nil
}

// Failures returns the failures in effect (with what is left of their Count).
func (d *Director) Failures() []Failure {
	d.knobs.mu.Lock()
	defer d.knobs.mu.Unlock()
	out := make([]Failure, len(d.knobs.failures))
	for i, f := range d.knobs.failures {
		out[i] = *f
	}
	return out
}
