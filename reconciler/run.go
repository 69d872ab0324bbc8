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
		return retry(gctx, r.retries(gctx), r.backoff(), r.logRetry("step", "listing deployments"), func(ctx context.Context) (err error) {
			deps, err = r.m.opts.Director.Deployments(ctx)
			return err
		})
	})
	g.Go(func() error {
		return retry(gctx, r.retries(gctx), r.backoff(), r.logRetry("step", "reading the index"), func(ctx context.Context) (err error) {
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

// observe fetches what a deployment runs (from the cache when it did not
// change), matches it and compares it with the index record; an instance
// that is not in step goes to the writers.
func (r *run) observe(ctx context.Context, d bosh.Deployment, writes chan<- *desired) {
	if d.Locked {
		r.log.Debug("deployment locked by a task, skipped", "deployment", d.Name)
		r.count(func(s *Summary) { s.Busy++ })
		r.done.Add(1)
		return
	}
	w, ok := r.observed(ctx, d)
	if !ok {
		r.done.Add(1)
		return
	}
	if r.inStep(r.index[w.match.InstanceID], w) {
		r.done.Add(1)
		return
	}
	writes <- w
}

// inStep says whether the index record shows the instance in step, so that
// nothing more is read: it holds the fingerprint of what the reconciler last
// wrote, no orphan flag and the deployment's name. A forced run trusts no
// fingerprint: it reads every instance's records again, so that a metadata
// or manifest document lost or changed in Vault is written again.
func (r *run) inStep(cur *vault.Record, w *desired) bool {
	return !r.opts.Force && cur != nil && cur.Fingerprint == w.fingerprint && !cur.Orphaned &&
		cur.DeploymentName == w.deployment
}

// observed fetches and matches a deployment; false when it is busy,
// unmatched, a duplicate, or could not be fetched (each recorded).
func (r *run) observed(ctx context.Context, d bosh.Deployment) (*desired, bool) {
	early, byName := r.m.matcher.matchByName(d.Name)
	var pf *prefetch
	if byName {
		pf = r.prefetch(ctx, early.InstanceID)
	}
	sc, err := r.fetch(ctx, d, byName)
	if err != nil {
		r.failUnlessStopped(ctx, "deployment "+d.Name, fmt.Errorf("deployment %s: %w", d.Name, err))
		return nil, false
	}
	if sc.manifest == "" {
		r.log.Debug("deployment has no manifest yet, skipped", "deployment", d.Name)
		r.count(func(s *Summary) { s.Busy++ })
		return nil, false
	}
	mt, ok := r.matchDeployment(d, sc, byName)
	if !ok {
		return nil, false
	}
	if !byName { // the VMs were not fetched with the manifest
		if sc, err = r.fetch(ctx, d, true); err != nil {
			r.failUnlessStopped(ctx, mt.InstanceID, fmt.Errorf("deployment %s: %w", d.Name, err))
			return nil, false
		}
	}
	r.count(func(s *Summary) { s.Matched++ })
	w := newDesired(d, sc, mt)
	w.prefetched = pf
	return w, true
}

// matchDeployment runs the matcher (the manifest is parsed only when the
// name alone does not match) and claims the instance for the deployment.
func (r *run) matchDeployment(d bosh.Deployment, sc *scanned, byName bool) (Match, bool) {
	var info *manifestInfo
	if !byName {
		var err error
		if info, err = sc.info(); err != nil {
			r.fail("deployment "+d.Name, fmt.Errorf("deployment %s: %w", d.Name, err))
			return Match{}, false
		}
	}
	mt, ok, reason := r.m.matcher.match(d, info)
	if !ok {
		r.log.Debug("deployment unmatched", "deployment", d.Name, "reason", reason)
		r.unmatched(d.Name, reason)
		return Match{}, false
	}
	r.log.Debug("deployment matched", "deployment", d.Name, "instance", mt.InstanceID,
		"strategy", mt.Strategy, "confidence", mt.Confidence, "rule", mt.Rule)
	if other, ok := r.claim(mt.InstanceID, d.Name); !ok {
		r.unmatched(d.Name, fmt.Sprintf("instance %s is already matched by deployment %s", mt.InstanceID, other))
		return Match{}, false
	}
	return mt, true
}

// fetch asks the scanner, with retries.
func (r *run) fetch(ctx context.Context, d bosh.Deployment, withVMs bool) (*scanned, error) {
	var sc *scanned
	err := retry(ctx, r.retries(ctx), r.backoff(), r.logRetry("deployment", d.Name), func(ctx context.Context) (err error) {
		sc, err = r.m.scanner.fetch(ctx, d, withVMs)
		return err
	})
	return sc, err
}
