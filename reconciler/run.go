package reconciler

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// maxErrorLines bounds Summary.Errors; ErrorCount keeps the full count.
const maxErrorLines = 100

// run is one reconciliation run.
type run struct {
	m     *Manager
	id    string
	opts  RunOptions
	start time.Time
	log   *slog.Logger
	index map[string]*vault.Record // as read at the start; never changed
	owned ownedDocs                // which instances have documents of their own (cold runs)
	plan  *planner                 // dry run only
	batch *batcher                 // nil in a dry run
	reads sync.WaitGroup           // prefetch goroutines, waited for before the run ends

	phase       atomic.Value // string
	done, total atomic.Int64

	mu       sync.Mutex
	sum      Summary
	claimed  map[string]string // instance id -> deployment that matched it
	flagged  map[string]effect // orphan flags changed by this run
	unmatch  []Unmatched
	failedID map[string]bool
}

// newRunID returns a random run id.
func newRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// execute makes one run; the caller holds the run lock.
func (m *Manager) execute(ctx context.Context, id string, opts RunOptions) Summary {
	r := &run{m: m, id: id, opts: opts, start: m.opts.Now(), claimed: map[string]string{},
		flagged: map[string]effect{}, failedID: map[string]bool{}, unmatch: []Unmatched{},
		log: m.log.With("run", id, "dry_run", opts.DryRun)}
	r.sum = Summary{RunID: id, DryRun: opts.DryRun, Forced: opts.Force, Reason: opts.Reason, StartedAt: r.start, Errors: []string{}}
	r.phase.Store(PhaseScanning)
	if opts.DryRun {
		r.plan = &planner{}
	}
	m.setCurrent(r)
	defer m.setCurrent(nil)
	if opts.Force {
		m.scanner.clear()
	}
	fetched := m.scanner.fetches.Load()
	r.log.Info("reconciler run started", "reason", opts.Reason, "force", opts.Force)
	err := r.do(ctx)
	s := r.finish(err, int(m.scanner.fetches.Load()-fetched))
	m.finished(r, s)
	return s
}

// do runs the stages: scan, match and update, flag orphans.
func (r *run) do(ctx context.Context) error {
	deps, err := r.scan(ctx)
	if err != nil {
		return err
	}
	r.total.Store(int64(len(deps)))
	r.count(func(s *Summary) { s.DeploymentsSeen = len(deps) })
	r.preclaim(deps)
	r.startBatcher(ctx)
	r.phase.Store(PhaseUpdating)
	r.pipeline(ctx, deps)
	r.reads.Wait()
	if ctx.Err() == nil {
		r.phase.Store(PhaseOrphans)
		r.orphans(ctx, deps)
	}
	r.stopBatcher()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("run cancelled: %w", err)
	}
	return nil
}

// scan lists the deployments and reads the index at once, with retries.
func (r *run) scan(ctx context.Context) ([]bosh.Deployment, error) {
	var deps []bosh.Deployment
	var idx *vault.Index
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		return retry.Do(gctx, r.retries(gctx), r.backoff(), r.logRetry("step", "listing deployments"), func(ctx context.Context) (err error) {
			deps, err = r.m.opts.Director.Deployments(ctx)
			return err
		})
	})
	g.Go(func() error {
		return retry.Do(gctx, r.retries(gctx), r.backoff(), r.logRetry("step", "reading the index"), func(ctx context.Context) (err error) {
			idx, err = r.m.opts.Store.Index(ctx)
			return err
		})
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, p := range idx.Problems {
		r.log.Warn("index record not fully readable, kept as is", "error", p)
	}
	r.index = idx.Records
	r.m.scanner.purge(deps)
	return deps, nil
}

// pipeline feeds the deployments to Config.MaxConcurrency observers, which
// fetch (or take from the cache), match and compare, and hand what needs
// writing to as many writers, so that Director fetches never wait for Vault.
func (r *run) pipeline(ctx context.Context, deps []bosh.Deployment) {
	n := r.m.cfg.MaxConcurrency
	work := make(chan bosh.Deployment)
	writes := make(chan *desired, 64*n)
	var observers, writers sync.WaitGroup
	for range n {
		observers.Go(func() {
			for d := range work {
				r.safely("deployment "+d.Name, func() { r.observe(ctx, d, writes) })
			}
		})
		writers.Go(func() {
			for w := range writes {
				if ctx.Err() == nil {
					r.safely("instance "+w.match.InstanceID, func() { r.write(ctx, w) })
				}
				r.done.Add(1)
			}
		})
	}
feed:
	for _, d := range deps {
		select {
		case work <- d:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	observers.Wait()
	close(writes)
	writers.Wait()
}

// safely runs f, turning a panic into an error of what it worked on.
func (r *run) safely(what string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("reconciler panic", "on", what, "panic", p, "stack", string(debug.Stack()))
			r.fail(what, fmt.Errorf("%s: panic: %v", what, p))
		}
	}()
	f()
}
