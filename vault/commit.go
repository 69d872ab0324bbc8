package vault

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// commitAll writes every plan that changes something, at most atOnce at a
// time.
func (bt *batcher) commitAll(ctx context.Context, plans []*plan, edits map[string]edit, atOnce int) (UpdateResult, error) {
	var (
		mu     sync.Mutex
		planMu sync.Mutex // the Changes of one Update never run concurrently
		res    UpdateResult
		errs   []error
		g      errgroup.Group
	)
	g.SetLimit(atOnce)
	for _, p := range plans {
		if len(p.changed) == 0 {
			mu.Lock()
			errs = append(errs, p.skipped...)
			mu.Unlock()
			continue
		}
		g.Go(func() error {
			done, err := bt.commit(ctx, p, edits, &planMu, 0)
			mu.Lock()
			defer mu.Unlock()
			res.Writes += done.writes
			res.Changed = append(res.Changed, done.changed...)
			errs = append(errs, done.skipped...)
			if err != nil {
				errs = append(errs, err)
			}
			return nil
		})
	}
	_ = g.Wait()
	slices.Sort(res.Changed)
	if err := errors.Join(errs...); err != nil {
		return res, fmt.Errorf("updating the index: %w", err)
	}
	return res, nil
}

// committed is what commit wrote.
type committed struct {
	changed []string
	skipped []error
	writes  int
}

// commit writes one shard's plan; on a check-and-set conflict it re-reads the
// shard, re-applies the edits and tries again. When the shard's records
// moved meanwhile (a re-shard), the edits follow them to the shards they
// moved to (depth bounds that chase).
func (bt *batcher) commit(ctx context.Context, p *plan, edits map[string]edit, planMu *sync.Mutex, depth int) (committed, error) {
	var done committed
	for attempt := 1; ; attempt++ {
		err := bt.writeShard(ctx, p)
		done.writes++
		if err == nil {
			done.changed, done.skipped = append(done.changed, p.changed...), append(done.skipped, p.skipped...)
			return done, nil
		}
		if !errors.Is(err, ErrConflict) || attempt == maxAttempts {
			return done, fmt.Errorf("shard %s not written (attempt %d): %w", bt.kv.display(p.sh.path), attempt, err)
		}
		if err := retry.Sleep(ctx, conflictBackoff.Delay(attempt)); err != nil {
			return done, err
		}
		sh, err := bt.docs.readShard(ctx, p.sh.count, p.sh.num)
		if err != nil {
			return done, fmt.Errorf("shard %s not written: re-reading after a conflict: %w", bt.kv.display(p.sh.path), err)
		}
		if sh.movedTo != 0 {
			more, err := bt.follow(ctx, sh, p.ids, edits, planMu, depth)
			done.changed, done.skipped = append(done.changed, more.changed...), append(done.skipped, more.skipped...)
			done.writes += more.writes
			return done, err
		}
		planMu.Lock()
		p, err = bt.plan(sh, p.ids, edits)
		planMu.Unlock()
		if err != nil {
			return done, fmt.Errorf("shard %s not written: %w", bt.kv.display(sh.path), err)
		}
		if len(p.changed) == 0 {
			done.skipped = append(done.skipped, p.skipped...)
			return done, nil
		}
	}
}

// follow commits the edits of ids, whose shard sh was found moved, in the
// shards their records moved to.
func (bt *batcher) follow(ctx context.Context, sh *shard, ids []string, edits map[string]edit, planMu *sync.Mutex, depth int) (committed, error) {
	var done committed
	if depth >= maxFollow {
		return done, fmt.Errorf("shard %s not written: %w: moved more than %d times during one update", bt.kv.display(sh.path), ErrConflict, maxFollow)
	}
	routes, err := bt.docs.route(ctx, sh.movedTo, ids, readParallelism)
	if err != nil {
		return done, fmt.Errorf("shard %s not written: following its records to %d shards: %w", bt.kv.display(sh.path), sh.movedTo, err)
	}
	var errs []error
	for _, r := range routes {
		planMu.Lock()
		p, err := bt.plan(r.sh, r.ids, edits)
		planMu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("shard %s not written: %w", bt.kv.display(r.sh.path), err))
			continue
		}
		if len(p.changed) == 0 {
			done.skipped = append(done.skipped, p.skipped...)
			continue
		}
		more, err := bt.commit(ctx, p, edits, planMu, depth+1)
		done.changed, done.skipped = append(done.changed, more.changed...), append(done.skipped, more.skipped...)
		done.writes += more.writes
		if err != nil {
			errs = append(errs, err)
		}
	}
	return done, errors.Join(errs...)
}

// maxFollow bounds how many times one update follows moved records.
const maxFollow = 4

// writeShard writes a plan's entries; KV v1 refuses an empty document, so
// there an emptied shard is deleted instead.
func (bt *batcher) writeShard(ctx context.Context, p *plan) error {
	if len(p.next) == 0 && bt.kv.version == 1 {
		return bt.kv.remove(ctx, p.sh.path)
	}
	// Every value is valid JSON: read from Vault or encoded by Record.
	return bt.kv.write(ctx, p.sh.path, encodeEntries(p.next), p.sh.version)
}

// conflictBackoff is the wait before re-reading a shard after a
// check-and-set conflict: short, growing, jittered.
var conflictBackoff = retry.Backoff{Base: 2 * time.Millisecond, Limit: 25 * time.Millisecond}
