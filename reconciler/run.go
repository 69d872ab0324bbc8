package reconciler

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// run is one reconciliation run: it lists both sides, wires the stages
// (observer, updater, index writer, orphaner) and feeds them the
// deployments, then sums up what they did.
type run struct {
	id    string
	opts  RunOptions
	start time.Time
	log   *slog.Logger
	parts runParts
	retry retrier
	state *runState
	index map[string]*vault.Record // as read at the start; never changed
	plan  *planner                 // dry run only
}

// newRunID returns a random run id.
func newRunID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// execute makes one run; the caller holds the run lock.
func (m *Manager) execute(ctx context.Context, id string, opts RunOptions) Summary {
	start := m.now()
	log := m.log.With("run", id, "dry_run", opts.DryRun)
	r := &run{id: id, opts: opts, start: start, log: log, parts: m.parts,
		retry: retrier{attempts: m.cfg.RetryAttempts, delay: m.cfg.RetryDelay, log: log},
		state: newRunState(log, Summary{RunID: id, DryRun: opts.DryRun, Forced: opts.Force, Reason: opts.Reason,
			StartedAt: start, Errors: []string{}, Conflicts: []Conflict{}})}
	if opts.DryRun {
		r.plan = &planner{}
	}
	m.setCurrent(r)
	defer m.setCurrent(nil)
	if opts.Force {
		m.parts.scanner.clear()
	}
	fetched := m.parts.scanner.fetches.Load()
	r.log.Info("reconciler run started", "reason", opts.Reason, "force", opts.Force)
	err := r.do(ctx)
	s := r.finish(err, int(m.parts.scanner.fetches.Load()-fetched))
	m.finished(r, s)
	return s
}

// do runs the stages: scan, match and update, flag orphans.
func (r *run) do(ctx context.Context) error {
	deps, err := r.scan(ctx)
	if err != nil {
		return err
	}
	r.state.total.Store(int64(len(deps)))
	r.state.count(func(s *Summary) { s.DeploymentsSeen = len(deps) })
	claimed := newClaims(r.index, deps)
	claimed.preclaim(r.parts.matcher, deps)
	writer := r.newIndexWriter()
	writer.start(ctx)
	upd := r.newUpdater(writer)
	r.state.phase.Store(PhaseUpdating)
	r.pipeline(ctx, deps, r.newObserver(claimed, upd), upd)
	upd.reads.Wait()
	if ctx.Err() == nil {
		r.state.phase.Store(PhaseOrphans)
		r.newOrphaner(claimed, writer).flag(ctx, deps)
	}
	writer.stop()
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
		return r.retry.do(gctx, "step", "listing deployments", func(ctx context.Context) (err error) {
			deps, err = r.parts.director.Deployments(ctx)
			return err
		})
	})
	g.Go(func() error {
		return r.retry.do(gctx, "step", "reading the index", func(ctx context.Context) (err error) {
			idx, err = r.parts.store.Index(ctx)
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
	r.parts.scanner.purge(deps)
	return deps, nil
}

// pipeline feeds the deployments to Config.MaxConcurrency observers, which
// fetch (or take from the cache), match and compare, and hand what needs
// writing to as many writers (the updater), so that Director fetches never
// wait for Vault.
func (r *run) pipeline(ctx context.Context, deps []bosh.Deployment, obs *observer, upd *updater) {
	n := r.parts.cfg.MaxConcurrency
	work := make(chan bosh.Deployment)
	writes := make(chan *desired, 64*n)
	var observers, writers sync.WaitGroup
	for range n {
		observers.Go(func() {
			for d := range work {
				r.state.safely("deployment "+d.Name, func() { obs.observe(ctx, d, writes) })
			}
		})
		writers.Go(func() {
			for w := range writes {
				if ctx.Err() == nil {
					r.state.safely("instance "+w.match.InstanceID, func() { upd.write(ctx, w) })
				}
				r.state.done.Add(1)
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
	r.settle(ctx, obs, writes)
	close(writes)
	writers.Wait()
}

// settle decides the instances whose claimants were held until every
// deployment was observed, records the losers as conflicts (nothing is
// written for them) and goes on with the winners, Config.MaxConcurrency at
// a time.
func (r *run) settle(ctx context.Context, obs *observer, writes chan<- *desired) {
	won, lost := obs.claims.settle()
	for _, l := range lost {
		r.state.conflict(l.Conflict, l.kept)
		r.state.done.Add(1)
	}
	work := make(chan *heldClaim)
	var resumers sync.WaitGroup
	for range min(r.parts.cfg.MaxConcurrency, len(won)) {
		resumers.Go(func() {
			for h := range work {
				r.state.safely("deployment "+h.d.Name, func() { obs.resume(ctx, h, writes) })
			}
		})
	}
feed:
	for _, h := range won {
		select {
		case work <- h:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	resumers.Wait()
}

// finish completes the summary.
func (r *run) finish(err error, fetched int) Summary {
	if err != nil {
		r.state.fail("", err)
	}
	s := r.state.summary()
	s.aborted = err
	s.Duration = r.parts.now().Sub(r.start)
	s.DurationSeconds = s.Duration.Seconds()
	s.ManifestsFetched = fetched
	s.OrphansTotal = len(r.orphanList())
	s.Converged = s.Writes == 0 && s.ErrorCount == 0
	if r.plan != nil {
		s.Plan = r.plan.result()
		s.Converged = s.Plan.empty() && s.ErrorCount == 0
	}
	r.log.Info("reconciler run finished", "duration", s.Duration, "deployments", s.DeploymentsSeen,
		"matched", s.Matched, "unmatched", s.Unmatched, "synced", s.InstancesSynced, "orphaned", s.Orphaned,
		"writes", s.Writes, "errors", s.ErrorCount, "converged", s.Converged)
	return s
}

// orphanList is the orphaned entries after the run (as read, with this
// run's flags applied), sorted by instance id.
func (r *run) orphanList() []Orphan {
	flagged := r.state.orphanFlags()
	out := []Orphan{}
	for id, rec := range r.index {
		e := flagged[id]
		switch {
		case e&effectOrphaned != 0:
			out = append(out, Orphan{InstanceID: id, Deployment: rec.Deployment(id), OrphanedAt: r.start.UTC().Truncate(time.Second)})
		case rec.Orphaned && e&effectUnorphaned == 0:
			at, _ := time.Parse(time.RFC3339, rec.OrphanedAt)
			out = append(out, Orphan{InstanceID: id, Deployment: rec.Deployment(id), OrphanedAt: at})
		}
	}
	slices.SortFunc(out, func(a, b Orphan) int { return cmp.Compare(a.InstanceID, b.InstanceID) })
	return out
}

// stamp is a run's start time in RFC 3339 (UTC), as records keep it.
func stamp(start time.Time) string { return start.UTC().Format(time.RFC3339) }

// newObserver wires the observer of the run.
func (r *run) newObserver(c *claims, upd *updater) *observer {
	return &observer{scanner: r.parts.scanner, matcher: r.parts.matcher, claims: c, index: r.index,
		force: r.opts.Force, updater: upd, state: r.state, retry: r.retry, log: r.log}
}

// newUpdater wires the updater of the run; it hands index changes to w.
func (r *run) newUpdater(w *indexWriter) *updater {
	store := r.parts.store
	return &updater{store: store, matcher: r.parts.matcher, index: r.index, dryRun: r.opts.DryRun,
		force: r.opts.Force, backups: r.parts.cfg.Backup.Enabled, start: r.start, writer: w,
		stored:  &storedInstances{list: store.Instances, log: r.log},
		metrics: r.parts.metrics, state: r.state, retry: r.retry, log: r.log}
}

// newIndexWriter wires the index writer of the run (a dry run's writes
// only to the plan).
func (r *run) newIndexWriter() *indexWriter {
	return &indexWriter{store: r.parts.store, batchSize: r.parts.cfg.BatchSize, index: r.index, plan: r.plan,
		backups: r.parts.cfg.Backup.Enabled, metrics: r.parts.metrics, state: r.state, retry: r.retry}
}

// newOrphaner wires the orphaner of the run.
func (r *run) newOrphaner(c *claims, w *indexWriter) *orphaner {
	return &orphaner{tasks: r.parts.tasks, grace: r.parts.cfg.OrphanGracePeriod, start: r.start, index: r.index,
		claims: c, writer: w, state: r.state, retry: r.retry, log: r.log}
}
