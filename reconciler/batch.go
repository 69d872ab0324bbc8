package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// effect is what an index change did to a record (a set of flags).
type effect uint8

const (
	effectCreated effect = 1 << iota
	effectUpdated
	effectUnorphaned
	effectOrphaned
)

// pending is an index change waiting for its batch.
type pending struct {
	id     string
	change vault.Change
	eff    *effect  // set by change each time it is invoked
	w      *desired // nil for an orphan flag
}

// batcher collects index changes and writes them with one Update (one read
// and at most one write per touched shard) at a time, in goroutines of its
// own so that the writers never wait for the index. Changes that come in
// during a write join the next one; flushPolicy says when a write starts.
type batcher struct {
	in   chan *pending
	done chan struct{}
}

// startBatcher starts the batcher of a run (none for a dry run). Its writes
// are not cancelled with ctx: changes already queued are written (without
// retries once ctx has ended) so that nothing is left half-done.
func (r *run) startBatcher(ctx context.Context) {
	if r.opts.DryRun {
		return
	}
	b := &batcher{in: make(chan *pending, min(r.m.cfg.BatchSize, 1024)), done: make(chan struct{})}
	r.batch = b
	go func() {
		defer close(b.done)
		r.collect(ctx, b.in)
	}()
}

// collect gathers changes and hands them to one flush at a time.
func (r *run) collect(ctx context.Context, in <-chan *pending) {
	var waiting []*pending
	policy := flushPolicy{batchSize: r.m.cfg.BatchSize, began: time.Now()}
	flushed := make(chan time.Duration, 1)
	busy := false
	tick := time.NewTicker(flushEvery / 4)
	defer tick.Stop()
	for in != nil || busy || len(waiting) > 0 {
		select {
		case p, ok := <-in:
			if ok {
				waiting = append(waiting, p)
			} else {
				in = nil
			}
		case policy.took = <-flushed:
			busy = false
		case <-tick.C:
		}
		if !busy && len(waiting) > 0 && policy.due(len(waiting), in == nil, r.progress()) {
			busy, policy.last = true, time.Now()
			go func(batch []*pending) {
				defer func(start time.Time) { flushed <- time.Since(start) }(time.Now())
				r.safely("index batch", func() { r.flush(ctx, batch) })
			}(waiting)
			waiting = nil
		}
	}
}

// stopBatcher writes what is left and waits for it.
func (r *run) stopBatcher() {
	if r.batch != nil {
		close(r.batch.in)
		<-r.batch.done
	}
}

// queueIndex hands an index change to the batcher, or, in a dry run,
// evaluates it against the index as read and adds it to the plan.
func (r *run) queueIndex(p *pending) {
	if r.batch != nil {
		r.batch.in <- p
		return
	}
	next, _ := p.change(r.index[p.id].Clone())
	e := *p.eff
	if next == nil {
		e = 0
	}
	r.account(p, e)
	switch {
	case p.w != nil:
		r.planRecords(p.w, e)
		if e&effectUnorphaned != 0 {
			r.plan.orphan(PlanOrphan{InstanceID: p.id, Deployment: p.w.deployment}, false)
		}
	case e&effectOrphaned != 0:
		r.plan.orphan(PlanOrphan{InstanceID: p.id, Deployment: r.index[p.id].Deployment(p.id)}, true)
	}
}

// flush writes one batch with retries and accounts for every change in it.
func (r *run) flush(ctx context.Context, batch []*pending) {
	if len(batch) == 0 {
		return
	}
	changes := make(map[string]vault.Change, len(batch))
	for _, p := range batch {
		changes[p.id] = p.change
	}
	written := map[string]effect{}
	wctx := context.WithoutCancel(ctx)
	err := retry.Do(ctx, r.retries(ctx), r.backoff(), r.logRetry("batch", len(batch)), func(context.Context) error {
		res, err := r.m.opts.Store.Update(wctx, changes)
		for _, id := range res.Changed {
			written[id] = *batchEffect(batch, id)
		}
		r.count(func(s *Summary) { s.Writes += res.Writes })
		r.m.metrics.writes.WithLabelValues(kindIndex).Add(float64(res.Writes))
		if errors.Is(err, vault.ErrCorrupt) || errors.Is(err, vault.ErrInvalid) {
			return retry.Terminal(err)
		}
		return err
	})
	for _, p := range batch {
		e, ok := written[p.id]
		switch {
		case ok:
			r.account(p, e)
		case err != nil:
			r.fail(p.id, fmt.Errorf("instance %s: writing its index record: %w", p.id, err))
		default:
			r.account(p, 0)
		}
	}
}

func batchEffect(batch []*pending, id string) *effect {
	for _, p := range batch {
		if p.id == id {
			return p.eff
		}
	}
	return new(effect)
}

// account counts what a change did (or would do, in a dry run).
func (r *run) account(p *pending, e effect) {
	r.count(func(s *Summary) {
		if e&effectCreated != 0 {
			s.Created++
		}
		if e&effectUpdated != 0 {
			s.Updated++
		}
		if e&effectUnorphaned != 0 {
			s.Unorphaned++
		}
		if e&effectOrphaned != 0 {
			s.Orphaned++
		}
		if p.w != nil && (e != 0 || p.w.wrote) {
			s.InstancesSynced++
		}
	})
	r.noteOrphan(p.id, e)
}
