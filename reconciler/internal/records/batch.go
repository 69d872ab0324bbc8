package records

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// batcher writes index changes together: it collects them and writes them
// with one Update (one read and at most one write per touched shard) at a
// time, in a goroutine of its own. Changes that come in during a write join
// the next one; flushPolicy says when a write starts.
type batcher struct {
	index     Index
	base      *vault.Index
	batchSize int
	shards    int // the index's shard count (partsOf)
	policy    memory.Policy
	progress  *memory.Progress
	ledger    *memory.Ledger
	counters  Counters
	account   func(*Queued, memory.Effect)

	in      chan *Queued
	closing atomic.Bool // every change is queued: the parts left go at Update's pace
	done    chan struct{}
}

// startBatcher starts the batches' goroutine.
func startBatcher(ctx context.Context, index Index, batchSize int, p memory.Policy, progress *memory.Progress,
	s Shared, account func(*Queued, memory.Effect)) *batcher {
	b := &batcher{index: index, base: s.Base, shards: s.Shards, batchSize: batchSize, policy: p, progress: progress, ledger: s.Ledger, counters: s.Counters, account: account,
		in: make(chan *Queued, min(batchSize, 1024)), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.collect(ctx)
	}()
	return b
}

// queue hands a change to the batches' goroutine.
func (b *batcher) queue(p *Queued) { b.in <- p }

// stop writes what is left and waits for it.
func (b *batcher) stop() {
	close(b.in)
	<-b.done
}

// collect gathers changes and hands them to one flush at a time.
func (b *batcher) collect(ctx context.Context) {
	in := (<-chan *Queued)(b.in)
	var waiting []*Queued
	policy := flushPolicy{batchSize: b.batchSize, began: time.Now()}
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
				b.closing.Store(true)
			}
		case policy.took = <-flushed:
			busy = false
		case <-tick.C:
		}
		if !busy && len(waiting) > 0 && policy.due(len(waiting), in == nil, b.progress.Now()) {
			busy, policy.last = true, time.Now()
			go func(batch []*Queued) {
				defer func(start time.Time) { flushed <- time.Since(start) }(time.Now())
				b.ledger.Safely("index batch", func() { b.flush(ctx, batch) })
			}(waiting)
			waiting = nil
		}
	}
}

// shardsAtOnceBeside is how many index shards a batch reads and writes at
// a time while the run still queues changes (its workers write instance
// documents, then it settles stuck operations and flags orphans). At
// Update's pace (8), a batch over a large index (thousands of shards in a
// cold run) took most of Vault in bursts of seconds: the workers waited on
// their instance writes, and their places at the Director stood idle
// (a cold run at 100,000: 1.25 -> 1.19 times its bound, with the slots'
// hand-over). Once every change is queued, a batch's parts go at Update's
// pace (those left of a batch under way too: the cold run's last batches
// took 1.7 s after its workers were done).
const shardsAtOnceBeside = 2

// pace is how many shards the next part of a batch reads and writes at a
// time (0: as Update).
func (b *batcher) pace() int {
	if b.closing.Load() {
		return 0
	}
	return shardsAtOnceBeside
}

// flush writes one batch with retries, at b's pace, and accounts for every
// change in it.
func (b *batcher) flush(ctx context.Context, batch []*Queued) {
	if len(batch) == 0 {
		return
	}
	byID := make(map[string]*Queued, len(batch)) // the last change of an id is the one written
	for _, p := range batch {
		byID[p.ID] = p
	}
	parts := partsOf(byID, b.shards)
	written := map[string]memory.Effect{}
	wctx := context.WithoutCancel(ctx)
	err := b.policy.Do(ctx, "batch", len(batch), func(context.Context) error {
		for _, changes := range parts {
			res, err := b.index.UpdateOver(wctx, changes, b.base, b.pace())
			for _, id := range res.Changed {
				written[id] = *byID[id].eff
			}
			b.ledger.Count(func(s *report.Summary) { s.Writes += res.Writes })
			b.counters.Wrote(KindIndex, res.Writes)
			if errors.Is(err, vault.ErrCorrupt) || errors.Is(err, vault.ErrInvalid) {
				return retry.Terminal(err)
			}
			if err != nil {
				return err // again from the first part: those written change nothing more
			}
		}
		return nil
	})
	for _, p := range batch {
		e, ok := written[p.ID]
		switch {
		case ok:
			b.account(p, e)
		case err != nil:
			b.ledger.FailUnlessStopped(ctx, report.InstanceKey(p.ID), fmt.Errorf("instance %s: writing its index record: %w", p.ID, err))
		default:
			b.account(p, 0)
		}
	}
}

// shardsPerWrite bounds the shards one index write of a batch reads and
// holds at once (a write reads every shard it changes before it writes any:
// a cold run's batch over 2,048 shards held the whole index, ~60-80 MB at
// 100,000 instances).
const shardsPerWrite = 256

// partsOf splits a batch's changes into parts of at most shardsPerWrite
// shards of a layout of n (0: one part); a shard's changes stay in one part,
// whatever n (a wrong n only splits a shard's changes over two writes).
func partsOf(byID map[string]*Queued, n int) []map[string]vault.Change {
	if n <= shardsPerWrite {
		all := make(map[string]vault.Change, len(byID))
		for id, p := range byID {
			all[id] = p.Change
		}
		return []map[string]vault.Change{all}
	}
	groups := (n + shardsPerWrite - 1) / shardsPerWrite
	parts := make([]map[string]vault.Change, groups)
	for id, p := range byID {
		g := vault.ShardOf(id, n) / shardsPerWrite
		if parts[g] == nil {
			parts[g] = map[string]vault.Change{}
		}
		parts[g][id] = p.Change
	}
	return slices.DeleteFunc(parts, func(m map[string]vault.Change) bool { return m == nil })
}

// flushEvery is the least time between two index writes while changes keep
// coming: changes that arrive meanwhile are written together, so that a
// cold run over thousands of instances writes each index shard a few times
// rather than once per batch_size instances.
const flushEvery = 5 * time.Second

// flushShare bounds the share of a run's time the index writes take while
// changes keep coming: the next write waits at least flushShare times what
// the last one took. A write of every shard of a large index (1,024 shards
// at 100,000 instances) takes seconds; written every flushEvery, it would
// be much of what Vault does in a cold run. The wait is at most flushMost
// (a write that took long because it was retried keeps the next one from
// waiting for ever).
const (
	flushShare = 10
	flushMost  = time.Minute
)

// shardsWrite is about what one write of every index shard takes: the end
// of a run is foreseen at least twice this far ahead (the first write, of
// batch_size changes, says little of how long a write of every shard takes).
const shardsWrite = 150 * time.Millisecond

// flushPolicy says when the index writes.
type flushPolicy struct {
	batchSize int
	began     time.Time     // when the batches started
	last      time.Time     // when the last write began
	took      time.Duration // how long the last write took
}

// due says whether the n changes waiting are to be written now: at the end
// of the run; else once Config.BatchSize of them are waiting and either
// flushEvery, and flushShare times what the last write took, have passed
// since the last write began, or the run looks set to end within two writes
// like the last one, so that what is left for the end of the run is a small
// write rather than one of every shard.
func (f *flushPolicy) due(n int, closed bool, p report.Progress) bool {
	switch {
	case closed:
		return true
	case n < f.batchSize:
		return false
	case time.Since(f.last) >= max(flushEvery, min(flushShare*f.took, flushMost)):
		return true
	}
	if p.Done == 0 || p.Total <= p.Done {
		return false
	}
	left := time.Duration(float64(time.Since(f.began)) * float64(p.Total-p.Done) / float64(p.Done))
	return left <= 2*max(f.took, shardsWrite)
}
