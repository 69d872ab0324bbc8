package notify

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// queue is one webhook's bounded FIFO of events: a ring that drops its
// oldest event when full, so that pushing never waits.
type queue struct {
	mu      sync.Mutex
	ring    []Event
	head    int // index of the oldest event
	size    int // events held
	dropped int // events dropped since pop last reported them
	length  prometheus.Gauge
	// ready holds a token when events were pushed since the worker last looked.
	ready chan struct{}
}

func newQueue(capacity int, length prometheus.Gauge) *queue {
	return &queue{ring: make([]Event, capacity), length: length, ready: make(chan struct{}, 1)}
}

// push appends e, dropping the oldest event when full; it returns the
// dropped event (nil: none) and whether it is the first dropped since pop
// last reported drops.
func (q *queue) push(e Event) (dropped *Event, first bool) {
	q.mu.Lock()
	if q.size == len(q.ring) {
		old := q.ring[q.head]
		dropped, first = &old, q.dropped == 0
		q.dropped++
		q.head = (q.head + 1) % len(q.ring)
		q.size--
	}
	q.ring[(q.head+q.size)%len(q.ring)] = e
	q.size++
	q.length.Set(float64(q.size))
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return dropped, first
}

// pop takes the oldest event (ok false: none), and reports the events
// dropped since it last did.
func (q *queue) pop() (e Event, ok bool, dropped int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	dropped, q.dropped = q.dropped, 0
	if q.size == 0 {
		return Event{}, false, dropped
	}
	e = q.ring[q.head]
	q.ring[q.head] = Event{}
	q.head = (q.head + 1) % len(q.ring)
	q.size--
	q.length.Set(float64(q.size))
	return e, true, dropped
}

// drain empties the queue; it returns how many events it held, and the
// events dropped since pop last reported them.
func (q *queue) drain() (left, dropped int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	left, dropped = q.size, q.dropped
	clear(q.ring)
	q.head, q.size, q.dropped = 0, 0, 0
	q.length.Set(0)
	return left, dropped
}
