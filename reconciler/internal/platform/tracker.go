package platform

import (
	"context"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
)

// Tracker reads the platform for the runs, at most every interval (0:
// every run), and keeps the last whole view across runs.
type Tracker struct {
	reader   ports.PlatformReader
	broker   string
	interval time.Duration
	requests func() int64 // the reader's requests so far; nil: not counted

	mu     sync.Mutex
	last   *View
	failed bool // the last read failed: the next one is due
}

// NewTracker reads the platform with r, the broker registered as broker.
// requests, when not nil, counts r's requests (a read's are its difference).
func NewTracker(r ports.PlatformReader, broker string, interval time.Duration, requests func() int64) *Tracker {
	return &Tracker{reader: r, broker: broker, interval: interval, requests: requests}
}

// Read is a run's view of the platform: read now when due (no whole read
// yet, the last read failed, a forced run, interval elapsed since the last
// whole read), else the last whole view, not fresh. An error says the
// platform could not be read whole now; requests and took are then the
// failed read's.
func (t *Tracker) Read(ctx context.Context, now func() time.Time, force bool) (v *View, fresh bool, requests int, took time.Duration, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	at := now()
	if !force && !t.failed && t.last != nil && t.interval > 0 && at.Sub(t.last.ReadAt) < t.interval {
		return t.last, false, 0, 0, nil
	}
	var before int64
	if t.requests != nil {
		before = t.requests()
	}
	v, err = Read(ctx, t.reader, t.broker, now)
	if t.requests != nil {
		requests = int(t.requests() - before)
	}
	took = now().Sub(at)
	t.failed = err != nil
	if err != nil {
		return nil, true, requests, took, err
	}
	v.Requests = requests
	t.last = v
	return v, true, requests, took, nil
}

// Last is the last whole view (nil: none yet).
func (t *Tracker) Last() *View {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}
