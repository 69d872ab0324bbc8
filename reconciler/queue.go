package reconciler

import (
	"slices"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// request is a run asked for with Trigger, shared by every caller whose
// request was merged into it.
type request struct {
	id      string
	opts    report.RunOptions
	waiters []chan report.Summary
}

// queue holds the runs asked for while the runs' loop serves another: one run and
// one dry run at most, each merging every request made meanwhile. It is
// safe for concurrent use.
type queue struct {
	wake chan struct{} // tells the runs' loop that a request is pending

	mu      sync.Mutex
	started bool
	pending [2]*request // [0] a run, [1] a dry run
}

func newQueue() *queue { return &queue{wake: make(chan struct{}, 1)} }

// setStarted marks the runs' loop as served or not; on the way out, callers still
// waiting for a run have their channel closed without a summary.
func (q *queue) setStarted(on bool) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if on && q.started {
		return ErrAlreadyStarted
	}
	q.started = on
	if !on {
		for i, p := range q.pending {
			if p != nil {
				for _, w := range p.waiters {
					close(w)
				}
			}
			q.pending[i] = nil
		}
	}
	return nil
}

// scheduled is the interval's run; a pending triggered run is merged into it.
func (q *queue) scheduled() *request {
	q.mu.Lock()
	defer q.mu.Unlock()
	if p := q.pending[0]; p != nil {
		q.pending[0] = nil
		return p
	}
	return &request{id: newRunID(), opts: report.RunOptions{Reason: "interval"}}
}

// take takes the pending run (before the pending dry run); nil when none.
func (q *queue) take() *request {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, p := range q.pending {
		if p != nil {
			q.pending[i] = nil
			return p
		}
	}
	return nil
}

// signalIfPending wakes the runs' loop again when requests came in during a run.
func (q *queue) signalIfPending() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending[0] != nil || q.pending[1] != nil {
		q.signal()
	}
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// add merges opts into the pending run of its kind (a dry run apart from
// the others) and returns its id and the channel that receives its summary;
// ErrNotRunning when the runs' loop is not served.
func (q *queue) add(opts report.RunOptions) (string, <-chan report.Summary, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.started {
		return "", nil, ErrNotRunning
	}
	slot := 0
	if opts.DryRun {
		slot = 1
	}
	p := q.pending[slot]
	if p == nil {
		p = &request{id: newRunID(), opts: report.RunOptions{DryRun: opts.DryRun, Scope: opts.Scope}}
		q.pending[slot] = p
	} else if p.opts.Scope != opts.Scope {
		p.opts.Scope = report.Scope{} // two scopes merged: the whole estate covers both
	}
	p.opts.Force = p.opts.Force || opts.Force
	p.opts.RetryQuarantined = p.opts.RetryQuarantined || opts.RetryQuarantined
	for _, id := range opts.Instances {
		if !slices.Contains(p.opts.Instances, id) {
			p.opts.Instances = append(p.opts.Instances, id)
		}
	}
	p.opts.Reason = joinReason(p.opts.Reason, opts.Reason)
	w := make(chan report.Summary, 1)
	p.waiters = append(p.waiters, w)
	q.signal()
	return p.id, w, nil
}

// idle says no run is asked for (a dry run aside).
func (q *queue) idle() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending[0] == nil
}

func joinReason(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
