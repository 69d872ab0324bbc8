package reconciler

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// run is one reconciliation run: it lists both sides, wires the stages
// (observer, updater, index writer, orphaner) and feeds them the
// deployments, then sums up what they did.
type run struct {
	id       string
	opts     RunOptions
	start    time.Time
	log      *slog.Logger
	parts    runParts
	retry    retrier
	state    *runState
	quar     *quarantine
	watch    *watch                   // the event feed since the last run (every Director's)
	feeds    map[string]*watch        // several Directors: each one's feed
	fallback map[string]bool          // several Directors: deployments whose Director's feed could not be read
	byDep    map[string]string        // deployment name -> instance id, as the index names them
	hist     *historian               // nil in a dry run
	trusted  atomic.Int64             // deployments the feed vouched for without a fetch
	known    map[string]bool          // conflicts the last run reported (not recorded again)
	index    map[string]*vault.Record // as read at the start; never changed
	listed   map[string]bool          // the deployments listed
	plan     *planner                 // dry run only
	single   *DirectorReport          // one Director: what its listing said (nil before it)
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
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	rt := retrier{attempts: m.cfg.RetryAttempts, delay: m.cfg.RetryDelay, log: log}
	r := &run{id: id, opts: opts, start: start, log: log, parts: m.parts.guarded(m.cfg.BreakerThreshold, rt, stop),
		retry: rt,
		state: newRunState(log, Summary{RunID: id, DryRun: opts.DryRun, Forced: opts.Force, Reason: opts.Reason,
			Scope:     scopeOrNil(opts.Scope),
			StartedAt: start, Errors: []string{}, Conflicts: []Conflict{}, LowConfidence: []LowConfidence{},
			MatchedBy: map[Strategy]int{}, Quarantined: []Quarantined{}, NewlyQuarantined: []Quarantined{},
			Released: []Quarantined{}, Blockers: []string{}, Settled: []Settled{}, Remediated: []Remediation{}}),
		quar: newQuarantine(m.cfg.Quarantine, start, opts)}
	if opts.DryRun {
		r.plan = &planner{}
	} else {
		r.hist = newHistorian(r.parts.store, id, vault.HistoryOptions{Keep: m.cfg.History.Keep, MaxAge: m.cfg.History.MaxAge},
			m.cfg.MaxConcurrency, m.now, log)
		r.hist.notifier, r.hist.director = m.notifier, m.parts.first
		if f := r.parts.fleet; f != nil {
			r.hist.directorOf = func(id, deployment string) string {
				if name := f.owned(deployment); name != "" {
					return name
				}
				if rec := r.index[id]; rec != nil {
					return rec.Director
				}
				return ""
			}
		}
	}
	r.known = m.knownConflicts()
	m.setCurrent(r)
	defer m.setCurrent(nil)
	if opts.Force && opts.Scope.Empty() {
		m.parts.scanner.clear()
	}
	fetched := m.parts.scanner.fetches.Load()
	r.log.Info("reconciler run started", "reason", opts.Reason, "force", opts.Force)
	err := r.do(ctx)
	r.hist.stop()
	written, failed := r.hist.counts()
	r.state.count(func(s *Summary) { s.HistoryEvents, s.HistoryFailures = written, failed })
	s := r.finish(err, int(m.parts.scanner.fetches.Load()-fetched))
	m.finished(r, s)
	m.logRun(r, s)
	return s
}

// guarded is a copy of p whose Director and Vault are behind a breaker
// each, for one run; stop ends the run when one opens. With several
// Directors each has a breaker of its own, and one that opens takes only
// its Director out of the run (the others go on).
func (p runParts) guarded(threshold int, rt retrier, stop context.CancelCauseFunc) runParts {
	if len(p.more) > 0 {
		f := newFleet(nil, rt)
		for _, m := range append([]member{{name: p.first, d: p.director, tasks: p.tasks}}, p.more...) {
			g := guardedDirector{d: m.d, tasks: m.tasks,
				b: newBreaker(systemDirector+" "+m.name, threshold, directorFailure, f.tripper(m.name))}
			mm := member{name: m.name, d: g}
			if m.tasks != nil {
				mm.tasks = g
			}
			f.members = append(f.members, mm)
		}
		p.fleet, p.director, p.tasks = f, f, f
	} else {
		gd := guardedDirector{d: p.director, tasks: p.tasks,
			b: newBreaker(systemDirector, threshold, directorFailure, stop)}
		p.director = gd
		if p.tasks != nil {
			p.tasks = gd
		}
	}
	p.store = guardedStore{Store: p.store, s: p.store, b: newBreaker(systemVault, threshold, vaultFailure, stop),
		fence: p.fence, stop: stop}
	return p
}

// notIgnored is deps without those Config.Ignore names (in place: deps is
// the run's own listing).
func (r *run) notIgnored(deps []bosh.Deployment) []bosh.Deployment {
	if len(r.parts.ignore) == 0 {
		return deps
	}
	out := make([]bosh.Deployment, 0, len(deps))
	for _, d := range deps {
		if !slices.ContainsFunc(r.parts.ignore, func(re *regexp.Regexp) bool { return re.MatchString(d.Name) }) {
			out = append(out, d)
		}
	}
	return out
}

// stopped is the error of a run that ctx ended: the breaker's cause when
// one opened, else err (or ctx's error when err is nil).
func stopped(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrCircuitOpen) || errors.Is(cause, ErrLostLease) {
		return cause
	}
	if err == nil && ctx.Err() != nil {
		return fmt.Errorf("run cancelled: %w", ctx.Err())
	}
	return err
}

// do runs the stages: read the event feed, scan, match and update, flag orphans.
func (r *run) do(ctx context.Context) error {
	r.watchFeed(ctx)
	deps, err := r.scan(ctx)
	if err != nil {
		return stopped(ctx, err)
	}
	if err := r.quar.load(ctx, r.parts.store); err != nil {
		r.state.failUnlessStopped(ctx, "", fmt.Errorf("%w; no item is skipped or quarantined this run", err))
	}
	listed := deps
	deps = r.notIgnored(deps)
	considered := len(deps)
	deps = r.scoped(deps)
	r.applyFeeds(deps)
	r.refreshScope(deps)
	r.state.total.Store(int64(len(deps)))
	r.state.count(func(s *Summary) {
		s.DeploymentsSeen, s.Ignored, s.OutOfScope = len(listed), len(listed)-considered, considered-len(deps)
	})
	claimed := newClaims(r.index, deps)
	claimed.preclaim(r.parts.matcher, deps)
	writer := r.newIndexWriter()
	writer.start(ctx)
	upd := r.newUpdater(writer)
	r.state.phase.Store(PhaseUpdating)
	r.pipeline(ctx, deps, r.newObserver(claimed, upd), upd)
	upd.reads.Wait()
	if ctx.Err() == nil {
		r.settleStuck(ctx)
	}
	if ctx.Err() == nil {
		r.state.phase.Store(PhaseOrphans)
		r.newOrphaner(claimed, writer).flag(ctx, listed)
	}
	writer.stop()
	if err := stopped(ctx, nil); err != nil {
		return err
	}
	r.remediate(ctx)
	r.settleQuarantine(ctx)
	if !r.opts.DryRun && r.opts.Scope.Empty() { // a scoped run did not deal with every named deployment
		r.saveFeeds(ctx)
	}
	return nil
}

// watchFeed reads the Director's events since the last run: in watch mode
// the deployments they name lose their cached copy, in resync mode the
// whole cache goes (every deployment is fetched).
func (r *run) watchFeed(ctx context.Context) {
	cfg := r.parts.cfg
	if r.parts.fleet != nil {
		r.watchFleet(ctx)
	} else {
		r.watch = readWatch(ctx, r.parts.store, r.parts.director, feedStateName, r.start, cfg.ResyncPeriod, r.opts.Force)
	}
	switch r.watch.report.Mode {
	case FeedResync:
		if r.opts.Scope.Empty() { // a scoped run drops its own deployments' copies (refreshScope)
			r.parts.scanner.clear()
		}
	case FeedWatch:
		for name := range r.watch.named {
			r.parts.scanner.forget(name)
		}
	}
	r.log.Info("event feed read", "mode", r.watch.report.Mode, "reason", r.watch.report.Reason,
		"events", r.watch.report.Events, "changed", r.watch.report.Changed, "pages", r.watch.report.Pages)
}

// pendingNames are the deployments the feed named (in watch mode) that are
// still listed and that the run could not fetch: quarantined, failing. The
// next runs fetch them as if named again (sorted).
func (r *run) pendingNames(w *watch) []string {
	if w.report.Mode != FeedWatch {
		return nil // a resync fetched (or tried) every deployment; a fallback keeps the old mark
	}
	var out []string
	for name := range w.named {
		if r.listed[name] && !r.state.wasFetched(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// refreshScope drops the cached copies of a scoped run's deployments when
// the run is forced or a resync (an unscoped one clears the whole cache).
func (r *run) refreshScope(deps []bosh.Deployment) {
	if r.opts.Scope.Empty() || !(r.opts.Force || r.watch.report.Mode == FeedResync) {
		return
	}
	for _, d := range deps {
		r.parts.scanner.forget(d.Name)
	}
}

// trust is the run's rule for cached copies: in watch mode every copy the
// feed did not name (named ones were dropped), otherwise those younger than
// cache_ttl (a resync run has none left).
func (r *run) trust() trust {
	ttl, start, fallback := r.parts.cfg.CacheTTL, r.start, r.fallback
	if r.watch.report.Mode == FeedWatch {
		if len(fallback) == 0 {
			return nil
		}
		// Several Directors: the copies of a Director whose feed could not be read go by cache_ttl.
		return func(name string, at time.Time) bool { return !fallback[name] || start.Sub(at) < ttl }
	}
	return func(_ string, at time.Time) bool { return start.Sub(at) < ttl }
}

// settleQuarantine quarantines what failed in this (complete) run and
// releases what is in step again, and writes the quarantine when it
// changed (not in a dry run). A run stopped part-way quarantines nothing:
// its failures may be the outage's.
func (r *run) settleQuarantine(ctx context.Context) {
	if !r.quar.loaded {
		return
	}
	// An item that may live on a Director the run could not list (or lost
	// part-way) is neither quarantined nor released: its failures may be
	// that Director's.
	considered := func(key string) bool { return r.inScope(key) && !r.onUnlistedDirector(key) }
	failed := r.state.failures()
	maps.DeleteFunc(failed, func(key, _ string) bool { return r.onUnlistedDirector(key) })
	ch := r.quar.settle(r.parts.now(), failed, r.listed, r.instanceOf, considered)
	r.state.count(func(s *Summary) {
		s.Quarantined, s.NewlyQuarantined, s.Released = r.quar.skippedItems(), ch.added, ch.released
		s.QuarantinedTotal = len(r.quar.list())
	})
	for _, q := range ch.added {
		transition := "yes" // notified when it enters the quarantine, not at each failed retry
		if q.Failures > 1 {
			transition = "no"
		}
		r.hist.add(q.InstanceID, vault.Event{Kind: "quarantined", Deployment: q.Deployment,
			Message: fmt.Sprintf("failed in %d runs in a row; skipped until %s: %s", q.Failures,
				q.NextAttempt.UTC().Format(time.RFC3339), q.LastError), Details: map[string]string{"transition": transition}})
		r.log.Warn("quarantined: later runs skip it until its backoff expires", "deployment", q.Deployment,
			"instance", q.InstanceID, "failures", q.Failures, "next_attempt", q.NextAttempt, "error", q.LastError)
	}
	for _, q := range ch.released {
		r.hist.add(q.InstanceID, vault.Event{Kind: "released", Deployment: q.Deployment,
			Message: "left the quarantine: in step again, or its deployment is gone"})
		r.log.Info("released from quarantine", "deployment", q.Deployment, "instance", q.InstanceID)
	}
	if ch.empty() || r.opts.DryRun {
		return
	}
	if err := r.quar.save(ctx, r.parts.store); err != nil {
		r.state.failUnlessStopped(ctx, "", err)
	}
}

// inScope says whether a quarantine key (deployment or instance) is within
// the run's scope: a scoped run releases nothing it did not look at.
func (r *run) inScope(key string) bool {
	sc := r.opts.Scope
	if sc.Empty() {
		return true
	}
	kind, name, _ := strings.Cut(key, " ")
	if kind == "deployment" {
		o, known := r.ownerOf(name)
		return sc.Covers(name, o, known)
	}
	if rec := r.index[name]; rec != nil {
		return sc.CoversRecord(name, rec)
	}
	return name == sc.Instance
}

// instanceOf is the instance a deployment's records belong to: by its
// name, else the index record that names it; "" when unknown.
func (r *run) instanceOf(name string) string {
	if mt, ok := r.parts.matcher.matchByName(name); ok {
		return mt.InstanceID
	}
	for id, rec := range r.index {
		if rec.Deployment(id) == name {
			return id
		}
	}
	return ""
}

// scan lists the deployments and reads the index at once, with retries.
func (r *run) scan(ctx context.Context) ([]bosh.Deployment, error) {
	var deps []bosh.Deployment
	var idx *vault.Index
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		err := r.retry.do(gctx, "step", "listing deployments", func(ctx context.Context) (err error) {
			deps, err = r.parts.director.Deployments(ctx)
			return err
		})
		// One Director: its report (not when the index read's failure cut the listing short).
		if r.parts.fleet == nil && (err == nil || gctx.Err() == nil) {
			r.single = &DirectorReport{Name: r.parts.first, Listed: err == nil, Deployments: len(deps)}
			if err != nil {
				r.single.Error = truncate(err.Error(), 1024)
			}
		}
		return err
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
	r.byDep = make(map[string]string, len(r.index))
	for id, rec := range r.index {
		r.byDep[rec.Deployment(id)] = id
	}
	r.listed = make(map[string]bool, len(deps))
	for _, d := range deps {
		r.listed[d.Name] = true
	}
	r.parts.scanner.purge(deps)
	return deps, nil
}

// pipeline feeds the deployments to Config.MaxConcurrency observers, which
// fetch (or take from the cache), match and compare, and hand what needs
// writing to as many writers (the updater), so that Director fetches never
// wait for Vault. Deployments whose fetch failed are fed again in later
// rounds (see rounds).
func (r *run) pipeline(ctx context.Context, deps []bosh.Deployment, obs *observer, upd *updater) {
	n := r.parts.cfg.MaxConcurrency
	work := make(chan roundItem)
	writes := make(chan *desired, 64*n)
	var observers, writers sync.WaitGroup
	for range n {
		observers.Go(func() {
			for it := range work {
				r.state.safely(deploymentKey(it.d.Name), func() { obs.observe(ctx, it.d, writes) })
				it.round.Done()
			}
		})
		writers.Go(func() {
			for w := range writes {
				if ctx.Err() == nil {
					r.state.safely(instanceKey(w.match.InstanceID), func() { upd.write(ctx, w) })
				}
				r.state.done.Add(1)
			}
		})
	}
	for round, batch := 1, deps; len(batch) > 0 && r.feed(ctx, work, batch); round++ {
		if batch = obs.rounds.next(); len(batch) > 0 {
			wait := r.retry.backoff().Delay(round)
			r.log.Warn("deployments could not be fetched, trying them again in a later round",
				"deployments", len(batch), "round", round+1, "retry_in", wait)
			if retry.Sleep(ctx, wait) != nil {
				break
			}
		}
	}
	close(work)
	observers.Wait()
	r.settle(ctx, obs, writes)
	close(writes)
	writers.Wait()
}

// roundItem is a deployment fed to the observers, and the round it belongs to.
type roundItem struct {
	d     bosh.Deployment
	round *sync.WaitGroup
}

// feed hands one round of deployments to the observers and waits until
// they are all observed; false when ctx ended first.
func (r *run) feed(ctx context.Context, work chan<- roundItem, batch []bosh.Deployment) bool {
	var round sync.WaitGroup
	defer round.Wait()
	for _, d := range batch {
		round.Add(1)
		select {
		case work <- roundItem{d: d, round: &round}:
		case <-ctx.Done():
			round.Done()
			return false
		}
	}
	return true
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
		if !r.known[conflictKey(l.Conflict)] {
			r.hist.add(l.InstanceID, vault.Event{Kind: "conflict", Deployment: l.Loser,
				Message: fmt.Sprintf("deployment %s claims this instance too; deployment %s keeps it and nothing is written for %s",
					l.Loser, l.Winner, l.Loser), Details: map[string]string{"winner": l.Winner, "loser": l.Loser}})
		}
	}
	work := make(chan *heldClaim)
	var resumers sync.WaitGroup
	for range min(r.parts.cfg.MaxConcurrency, len(won)) {
		resumers.Go(func() {
			for h := range work {
				r.state.safely(deploymentKey(h.d.Name), func() { obs.resume(ctx, h, writes) })
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
	r.reportFleet()
	s := r.state.summary()
	s.Aborted = err
	s.Duration = r.parts.now().Sub(r.start)
	s.DurationSeconds = s.Duration.Seconds()
	s.ManifestsFetched = fetched
	if r.watch != nil {
		s.Feed = r.watch.report
		s.Feed.Trusted = int(r.trusted.Load())
	}
	switch {
	case r.parts.fleet != nil:
		s.Directors = r.parts.fleet.reports(r.feeds)
	case r.single != nil:
		d := *r.single
		if r.watch != nil {
			feed := s.Feed
			d.Feed = &feed
		}
		s.Directors = []DirectorReport{d}
	}
	s.OrphansTotal = len(r.orphanList())
	if r.plan != nil {
		s.Plan = r.plan.result()
	}
	if len(s.Quarantined) == 0 && r.quar.loaded && err == nil {
		s.Quarantined = r.quar.skippedItems()
	}
	s.Result, s.Blockers = report.Outcome(s)
	s.Converged = len(s.Blockers) == 0
	r.log.Info("reconciler run finished", "duration", s.Duration, "deployments", s.DeploymentsSeen,
		"matched", s.Matched, "unmatched", s.Unmatched, "synced", s.InstancesSynced, "orphaned", s.Orphaned,
		"writes", s.Writes, "errors", s.ErrorCount, "quarantined", len(s.Quarantined), "result", s.Result,
		"converged", s.Converged)
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
	return &observer{director: r.parts.director, rounds: newRounds(r.parts.cfg.RetryAttempts), quar: r.quar, minConfidence: r.parts.cfg.MinConfidence, watch: r.watch, trust: r.trust(), byDep: r.byDep, trusted: &r.trusted,
		scanner: r.parts.scanner, matcher: r.parts.matcher, claims: c, index: r.index,
		force: r.opts.Force, updater: upd, state: r.state, retry: r.retry, log: r.log}
}

// newUpdater wires the updater of the run; it hands index changes to w.
func (r *run) newUpdater(w *indexWriter) *updater {
	store := r.parts.store
	return &updater{store: store, matcher: r.parts.matcher, index: r.index, dryRun: r.opts.DryRun, history: r.hist,
		force: r.opts.Force, backups: r.parts.cfg.Backup.Enabled, start: r.start, writer: w,
		stored:  &storedInstances{list: store.Instances, log: r.log},
		metrics: r.parts.metrics, state: r.state, retry: r.retry, log: r.log}
}

// newIndexWriter wires the index writer of the run (a dry run's writes
// only to the plan).
func (r *run) newIndexWriter() *indexWriter {
	return &indexWriter{store: r.parts.store, batchSize: r.parts.cfg.BatchSize, index: r.index, plan: r.plan, history: r.hist,
		backups: r.parts.cfg.Backup.Enabled, metrics: r.parts.metrics, state: r.state, retry: r.retry}
}

// newOrphaner wires the orphaner of the run.
func (r *run) newOrphaner(c *claims, w *indexWriter) *orphaner {
	return &orphaner{scope: r.opts.Scope, tasks: r.parts.tasks, unknown: r.unknown, grace: r.parts.cfg.OrphanGracePeriod, start: r.start, index: r.index,
		claims: c, writer: w, state: r.state, retry: r.retry, log: r.log}
}

// scopeOrNil is the summary's scope: nil for everything.
func scopeOrNil(s Scope) *Scope {
	if s.Empty() {
		return nil
	}
	return &s
}
