package reconciler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"

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
	eff    *effect // set by change each time it is invoked
	w      *update // nil for an orphan flag
}

// indexWriter is the stage that writes index changes: it collects them and
// writes them with one Update (one read and at most one write per touched
// shard) at a time, in goroutines of its own so that the updater never waits
// for the index. Changes that come in during a write join the next one;
// flushPolicy says when a write starts. In a dry run it writes nothing: each
// change is evaluated against the index as read and added to the plan.
type indexWriter struct {
	store     Index
	batchSize int                      // Config.BatchSize
	index     map[string]*vault.Record // as read at the start of the run
	plan      *planner                 // dry run only; nil: write
	backups   bool                     // Config.Backup.Enabled, for the plan
	metrics   *metrics
	history   *historian // nil in a dry run
	state     *runState
	retry     retrier

	in   chan *pending // nil in a dry run
	done chan struct{}
}

// start starts the writer's goroutine (none for a dry run). Its writes
// are not cancelled with ctx: changes already queued are written (without
// retries once ctx has ended) so that nothing is left half-done.
func (x *indexWriter) start(ctx context.Context) {
	if x.plan != nil {
		return
	}
	x.in, x.done = make(chan *pending, min(x.batchSize, 1024)), make(chan struct{})
	go func() {
		defer close(x.done)
		x.collect(ctx, x.in)
	}()
}

// collect gathers changes and hands them to one flush at a time.
func (x *indexWriter) collect(ctx context.Context, in <-chan *pending) {
	var waiting []*pending
	policy := flushPolicy{batchSize: x.batchSize, began: time.Now()}
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
		if !busy && len(waiting) > 0 && policy.due(len(waiting), in == nil, x.state.progress()) {
			busy, policy.last = true, time.Now()
			go func(batch []*pending) {
				defer func(start time.Time) { flushed <- time.Since(start) }(time.Now())
				x.state.safely("index batch", func() { x.flush(ctx, batch) })
			}(waiting)
			waiting = nil
		}
	}
}

// stop writes what is left and waits for it.
func (x *indexWriter) stop() {
	if x.in != nil {
		close(x.in)
		<-x.done
	}
}

// queue hands an index change to the writer's goroutine, or, in a dry run,
// evaluates it against the index as read and adds it to the plan.
func (x *indexWriter) queue(p *pending) {
	if x.in != nil {
		x.in <- p
		return
	}
	next, _ := p.change(x.index[p.id].Clone())
	e := *p.eff
	if next == nil {
		e = 0
	}
	x.account(p, e)
	switch {
	case p.w != nil:
		x.planRecords(p.w, e)
		if e&effectUnorphaned != 0 {
			x.plan.orphan(PlanOrphan{InstanceID: p.id, Deployment: p.w.deployment}, false)
		}
	case e&effectOrphaned != 0:
		x.plan.orphan(PlanOrphan{InstanceID: p.id, Deployment: x.index[p.id].Deployment(p.id)}, true)
	}
}

// flush writes one batch with retries and accounts for every change in it.
func (x *indexWriter) flush(ctx context.Context, batch []*pending) {
	if len(batch) == 0 {
		return
	}
	changes := make(map[string]vault.Change, len(batch))
	for _, p := range batch {
		changes[p.id] = p.change
	}
	written := map[string]effect{}
	wctx := context.WithoutCancel(ctx)
	err := x.retry.do(ctx, "batch", len(batch), func(context.Context) error {
		res, err := x.store.Update(wctx, changes)
		for _, id := range res.Changed {
			written[id] = *batchEffect(batch, id)
		}
		x.state.count(func(s *Summary) { s.Writes += res.Writes })
		x.metrics.writes.WithLabelValues(kindIndex).Add(float64(res.Writes))
		if errors.Is(err, vault.ErrCorrupt) || errors.Is(err, vault.ErrInvalid) {
			return retry.Terminal(err)
		}
		return err
	})
	for _, p := range batch {
		e, ok := written[p.id]
		switch {
		case ok:
			x.account(p, e)
		case err != nil:
			x.state.failUnlessStopped(ctx, instanceKey(p.id), fmt.Errorf("instance %s: writing its index record: %w", p.id, err))
		default:
			x.account(p, 0)
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
func (x *indexWriter) account(p *pending, e effect) {
	x.state.count(func(s *Summary) {
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
	x.state.noteOrphan(p.id, e)
	switch name := x.index[p.id].Deployment(p.id); {
	case e&effectOrphaned != 0:
		x.history.add(p.id, vault.Event{Kind: "orphaned", Deployment: name,
			Message: "the deployment is no longer listed by the Director; the records are kept"})
	case e&effectUnorphaned != 0:
		x.history.add(p.id, vault.Event{Kind: "unorphaned", Deployment: name, Message: "the deployment is listed again"})
	}
}

// planRecords adds what a dry run would write for an instance to the plan;
// e is what its index change would do.
func (x *indexWriter) planRecords(w *update, e effect) {
	item := PlanItem{InstanceID: w.match.InstanceID, Deployment: w.deployment, ServiceID: w.serviceID,
		PlanID: w.planID, Strategy: w.match.Strategy, Confidence: w.match.Confidence, Drift: w.changes.drift}
	if e != 0 {
		item.Records = append(item.Records, report.RecordIndex)
	}
	if w.metadataWrite {
		item.Records = append(item.Records, report.RecordMetadata)
	}
	if w.changes.manifest {
		item.Records = append(item.Records, report.RecordManifest)
	}
	if len(item.Records) == 0 {
		return
	}
	if w.changes.drift {
		x.state.count(func(s *Summary) { s.Drift++ })
	}
	x.plan.add(item, e&effectCreated != 0, w.changes.backup && x.backups)
}
