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

// commitAll writes every plan that changes something, in parallel.
func (s *Store) commitAll(ctx context.Context, plans []*plan, groups map[int][]string, edits map[string]edit) (UpdateResult, error) {
	var (
		mu     sync.Mutex
		planMu sync.Mutex // the Changes of one Update never run concurrently
		res    UpdateResult
		errs   []error
		g      errgroup.Group
	)
	g.SetLimit(readParallelism)
	for _, p := range plans {
		if len(p.changed) == 0 {
			mu.Lock()
			errs = append(errs, p.skipped...)
			mu.Unlock()
			continue
		}
		g.Go(func() error {
			final, writes, err := s.commit(ctx, p, groups[p.sh.num], edits, &planMu)
			mu.Lock()
			defer mu.Unlock()
			res.Writes += writes
			if err != nil {
				errs = append(errs, err)
				return nil
			}
			res.Changed = append(res.Changed, final.changed...)
			errs = append(errs, final.skipped...)
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

// commit writes one shard's plan; on a check-and-set conflict it re-reads the
// shard, re-applies the edits and tries again.
func (s *Store) commit(ctx context.Context, p *plan, ids []string, edits map[string]edit, planMu *sync.Mutex) (*plan, int, error) {
	writes := 0
	for attempt := 1; ; attempt++ {
		err := s.writeShard(ctx, p)
		writes++
		if err == nil {
			return p, writes, nil
		}
		if !errors.Is(err, ErrConflict) || attempt == maxAttempts {
			return nil, writes, fmt.Errorf("shard %s not written (attempt %d): %w", s.kv.display(p.sh.path), attempt, err)
		}
		if err := retry.Sleep(ctx, conflictBackoff.Delay(attempt)); err != nil {
			return nil, writes, err
		}
		sh, err := s.readShard(ctx, p.sh.num)
		if err != nil {
			return nil, writes, fmt.Errorf("shard %s not written: re-reading after a conflict: %w", s.kv.display(p.sh.path), err)
		}
		planMu.Lock()
		p, err = s.plan(sh, ids, edits)
		planMu.Unlock()
		if err != nil {
			return nil, writes, fmt.Errorf("shard %s not written: %w", s.kv.display(sh.path), err)
		}
		if len(p.changed) == 0 {
			return p, writes, nil
		}
	}
}

// writeShard writes a plan's entries; KV v1 refuses an empty document, so
// there an emptied shard is deleted instead.
func (s *Store) writeShard(ctx context.Context, p *plan) error {
	if len(p.next) == 0 && s.kv.version == 1 {
		return s.kv.remove(ctx, p.sh.path)
	}
	// Every value is valid JSON: read from Vault or encoded by Record.
	return s.kv.write(ctx, p.sh.path, encodeEntries(p.next), p.sh.version)
}

// conflictBackoff is the wait before re-reading a shard after a
// check-and-set conflict: short, growing, jittered.
var conflictBackoff = retry.Backoff{Base: 2 * time.Millisecond, Limit: 25 * time.Millisecond}
