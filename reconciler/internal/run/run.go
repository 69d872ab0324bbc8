package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The stages' Vault, as the guard gives it (checked here: a method added to
// a stage's interface does not compile until the guard wraps it).
var (
	_ records.Documents   = (*guard.DocumentStore)(nil)
	_ records.Backups     = (*guard.BackupStore)(nil)
	_ records.Index       = (*guard.IndexStore)(nil)
	_ memory.StateStore   = (*guard.MemoryStore)(nil)
	_ memory.HistoryStore = (*guard.MemoryStore)(nil)
	_ remover             = (*guard.MemoryStore)(nil)
)

// run is one run's state: what it read at its start (the listing, the
// index, the feeds) and the parts its phases share.
type run struct {
	id     string
	opts   report.RunOptions
	start  time.Time
	log    *slog.Logger
	p      Parts
	policy memory.Policy
	known  map[string]bool

	fleet    *fleet.Fleet
	vault    guard.Guarded
	ledger   *memory.Ledger
	progress *memory.Progress
	quar     *memory.Quarantine
	hist     *memory.Historian   // nil in a dry run
	plan     *records.PlanWriter // dry run only
	writer   records.Writer

	view   *fleet.View // the event feeds since the last run
	trust  fleet.Trust // which cached copies the run may use
	seen   listing     // what the listing found; never changed after it
	shards int         // the index's shard count the run writes to (the index growth may raise it)
	owners owners      // who owns a deployment, as its name or the index tells
}

// listing is what the listing phase found, the input of every phase after
// it: the deployments listed and the index as read at the start.
type listing struct {
	index  map[string]*vault.Record // as read at the start; never changed
	base   *vault.Index             // the index read, index its Records: what index changes are written over
	byDep  map[string]string        // deployment name -> instance id, as the index names them
	listed map[string]bool          // the deployments listed
	locked map[string]bool          // the listed deployments a task holds
}

// newListing is the listing of the index idx as read, before the
// deployments are known (listed adds them).
func newListing(idx *vault.Index) listing {
	l := listing{index: idx.Records, base: idx, byDep: make(map[string]string, len(idx.Records)), locked: map[string]bool{}}
	for id, rec := range l.index {
		l.byDep[rec.Deployment(id)] = id
	}
	return l
}

// with is l with the deployments deps (one per name).
func (l listing) with(deps []bosh.Deployment) listing {
	l.listed = make(map[string]bool, len(deps))
	for _, d := range deps {
		l.listed[d.Name] = true
		if d.Locked {
			l.locked[d.Name] = true
		}
	}
	return l
}

// Run makes one run and returns what it found. The caller makes one run at
// a time (the run lock).
func Run(ctx context.Context, p Parts, req Request) Result {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	r := newRun(p, req, stop)
	if req.Options.Force && req.Options.Scope.Empty() {
		p.Cache.Clear()
	}
	fetched := p.Cache.Fetches()
	r.log.Info("reconciler run started", "reason", req.Options.Reason, "force", req.Options.Force)
	err := r.do(ctx)
	r.hist.Stop()
	written, failed := r.hist.Counts()
	r.ledger.Count(func(s *report.Summary) { s.HistoryEvents, s.HistoryFailures = written, failed })
	return r.finish(err, int(p.Cache.Fetches()-fetched))
}

// newRun builds a run's parts: the fleet and Vault behind their breakers
// (stop ends the run when Vault's opens, or once no Director is left), the
// ledger, the quarantine, the history (not in a dry run).
func newRun(p Parts, req Request, stop context.CancelCauseFunc) *run {
	start := p.Now()
	opts := req.Options
	log := p.Log.With("run", req.ID, "dry_run", opts.DryRun)
	cfg := p.Config
	policy := memory.Policy{Attempts: cfg.RetryAttempts, Delay: cfg.RetryDelay, Quarantine: cfg.Quarantine, Log: log}
	r := &run{id: req.ID, opts: opts, start: start, log: log, p: p, policy: policy, known: req.Known,
		fleet:    p.Directors.ForRun(cfg.BreakerThreshold, policy, stop),
		vault:    guard.Wrap(p.Vault, guard.NewBreaker("vault", cfg.BreakerThreshold, guard.VaultFailure, stop), p.Fence, stop),
		progress: req.Progress,
		quar:     memory.NewQuarantine(policy, start, opts),
		ledger: memory.NewLedger(log, report.Summary{RunID: req.ID, DryRun: opts.DryRun, Forced: opts.Force, Reason: opts.Reason,
			Scope: scopeOrNil(opts.Scope), StartedAt: start, Errors: []string{}, Conflicts: []report.Conflict{},
			LowConfidence: []report.LowConfidence{}, MatchedBy: map[report.Strategy]int{}, Quarantined: []report.Quarantined{},
			NewlyQuarantined: []report.Quarantined{}, Released: []report.Quarantined{}, Blockers: []string{},
			Settled: []report.Settled{}, Remediated: []report.Remediation{}, Phases: []report.PhaseTime{}}),
	}
	if !opts.DryRun {
		r.hist = memory.NewHistorian(r.vault.Memory, req.ID, vault.HistoryOptions{Keep: cfg.History.Keep, MaxAge: cfg.History.MaxAge},
			cfg.MaxConcurrency, p.Notifier, r.directorOf, p.Now, log)
	}
	return r
}

// directorOf names the Director of instance id in notifications: the one
// that listed its deployment, else the one its record names, else the first.
func (r *run) directorOf(id, deployment string) string {
	if name := r.fleet.Owner(deployment); name != "" {
		return name
	}
	if rec := r.seen.index[id]; rec != nil && rec.Director != "" {
		return rec.Director
	}
	return r.p.Directors.First()
}

// between is what a run's phases hand each other, beside the run's own
// state: the platform's read under way, the deployments listed, those the
// run deals with, and the claims on the instances.
type between struct {
	platform *platformRead
	deps     []bosh.Deployment
	chosen   []bosh.Deployment
	claims   *match.Claims[*held]
}

// phase is one step of a run: its name (the summary's phases, the docs),
// the progress phase shown while it runs ("" keeps the one before), whether
// only a whole run makes it (not a dry run, not a scoped one: do skips it
// in others), and what it does: most give a phase type its input from the
// run and put its answer in the summary; an error ends the run (its listing
// failed, or it was stopped).
type phase struct {
	name     string
	progress string
	whole    bool
	run      func(ctx context.Context, r *run, b *between) error
}

// phases are a run's phases, in order: do runs them, reports each in
// Progress and times each in Summary.Phases, so that a phase added is
// reported and timed by construction (and named in the docs: the docs
// spec reads this list).
var phases = []phase{
	{"platform read", report.PhaseScanning, false, func(ctx context.Context, r *run, b *between) error {
		b.platform = readPlatform(ctx, r) // in the background, beside the listing
		return nil
	}},
	{"event feeds", "", false, func(ctx context.Context, r *run, _ *between) error { r.readFeeds(ctx); return nil }},
	{"listing", "", false, func(ctx context.Context, r *run, b *between) (err error) {
		if b.deps, err = r.list(ctx); err != nil {
			return stopped(ctx, err)
		}
		return nil
	}},
	{"quarantine read", "", false, func(ctx context.Context, r *run, _ *between) error {
		if err := r.quar.Load(ctx, r.vault.Memory); err != nil {
			r.ledger.FailUnlessStopped(ctx, "", fmt.Errorf("%w; no item is skipped or quarantined this run", err))
		}
		return nil
	}},
	{"choice and claims", "", false, func(_ context.Context, r *run, b *between) error {
		b.chosen = r.choose(b.deps)
		b.claims = match.NewClaims[*held](r.seen.index, b.chosen)
		b.claims.Preclaim(r.p.Matcher, b.chosen)
		return nil
	}},
	{"index growth", "", true, func(ctx context.Context, r *run, b *between) error {
		ir, shards := growth{index: r.vault.Index, log: r.log}.Run(ctx, growthIn{seen: r.seen, chosen: b.chosen, shards: r.shards})
		r.shards = shards
		if ir != nil {
			r.ledger.Count(func(s *report.Summary) { s.Index = ir })
		}
		return nil
	}},
	{"reconcile", report.PhaseUpdating, false, func(ctx context.Context, r *run, b *between) error {
		r.startWriter(ctx)
		r.reconcileAll(ctx, b.chosen, b.claims)
		return nil
	}},
	{"stuck operations", "", false, func(ctx context.Context, r *run, _ *between) error {
		if ctx.Err() == nil {
			r.stuck().settle(ctx)
		}
		return nil
	}},
	{"orphans", report.PhaseOrphans, false, func(ctx context.Context, r *run, b *between) error {
		if ctx.Err() == nil {
			r.orphans(b.claims).flag(ctx, b.deps)
		}
		r.writer.Close()
		return stopped(ctx, nil)
	}},
	{"remediation", report.PhaseRemediating, false, func(ctx context.Context, r *run, _ *between) error { r.remedy().remediate(ctx); return nil }},
	{"platform cross-check", report.PhasePlatform, false, func(ctx context.Context, r *run, b *between) error {
		crossCheck(ctx, r, b.platform, b.claims)
		return nil
	}},
	{"bindings", report.PhaseBindings, true, func(ctx context.Context, r *run, _ *between) error { checkBindings(ctx, r); return nil }},
	{"quarantine", report.PhaseQuarantine, false, func(ctx context.Context, r *run, _ *between) error { r.settleQuarantine(ctx); return nil }},
	// A scoped run did not deal with every named deployment.
	{"feed marks", "", true, func(ctx context.Context, r *run, _ *between) error { r.saveFeeds(ctx); return nil }},
	// Last, what does not change records: a slow Director or a failing
	// check holds up nothing above.
	{"health", report.PhaseHealth, true, func(_ context.Context, r *run, _ *between) error {
		if r.p.Health != nil {
			rep := handing{tracker: r.p.Health}.Run(handingIn{seen: r.seen, owner: r.fleet.Owner,
				allListed: fleet.HealthOf(r.fleet).AllListed(), named: r.view.HealthNamed(), runID: r.id, at: r.start})
			r.ledger.Count(func(s *report.Summary) { s.Health = rep })
		}
		return nil
	}},
	{"outdated", report.PhaseOutdated, true, func(ctx context.Context, r *run, b *between) error { findOutdated(ctx, r, b.deps); return nil }},
}

// PhaseNames are the names of a run's phases, in order.
func PhaseNames() []string {
	out := make([]string, len(phases))
	for i, ph := range phases {
		out[i] = ph.name
	}
	return out
}

// do runs the run's phases in order, each reported and timed, until one
// ends the run.
func (r *run) do(ctx context.Context) error {
	var b between
	for _, ph := range phases {
		if ph.progress != "" {
			r.progress.SetPhase(ph.progress)
		}
		began := time.Now()
		var err error
		if !ph.whole || (!r.opts.DryRun && r.opts.Scope.Empty()) {
			err = ph.run(ctx, r, &b)
		}
		took := report.PhaseTime{Name: ph.name, Seconds: time.Since(began).Seconds()}
		r.ledger.Count(func(s *report.Summary) { s.Phases = append(s.Phases, took) })
		if err != nil {
			return err
		}
	}
	return nil
}

// readFeeds reads every Director's events since the last run: in watch
// mode the deployments they name lose their cached copy, in resync mode
// the whole cache goes (every deployment is fetched).
func (r *run) readFeeds(ctx context.Context) {
	r.view = r.fleet.Feeds().Read(ctx, r.vault.Memory, r.start, r.p.Config.ResyncPeriod, r.opts.Force)
	rep := r.view.Report
	switch rep.Mode {
	case report.FeedResync:
		if r.opts.Scope.Empty() { // a scoped run drops its own deployments' copies (choose)
			r.p.Cache.Clear()
		}
	case report.FeedWatch:
		for _, name := range r.view.Named() {
			r.p.Cache.Forget(name)
		}
	}
	r.log.Info("event feed read", "mode", rep.Mode, "reason", rep.Reason, "events", rep.Events, "changed", rep.Changed, "pages", rep.Pages)
}

// list lists every Director and reads the index at once, with retries, and
// keeps one deployment per name: the one on the Director an owned record
// names (a deployment of its name elsewhere is a conflict).
func (r *run) list(ctx context.Context) ([]bosh.Deployment, error) {
	var all []bosh.Deployment
	var idx *vault.Index
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() (err error) {
		all, err = r.fleet.List(gctx)
		return err
	})
	g.Go(func() error {
		return r.policy.Do(gctx, "step", "reading the index", func(ctx context.Context) (err error) {
			if idx, err = r.vault.Index.IndexFrom(ctx, r.p.Index.Get()); err == nil {
				r.p.Index.Put(idx) // kept even when the listing fails
			}
			return err
		})
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for _, p := range idx.Problems {
		r.log.Warn("index record not fully readable, kept as is", "error", p)
	}
	seen := newListing(idx)
	deps, conflicts := r.fleet.Choose(all, func(name string) (string, string, bool) {
		id, ok := seen.byDep[name]
		if rec := seen.index[id]; ok && rec.Owned() {
			return id, rec.Director, true
		}
		return "", "", false
	})
	r.seen, r.shards = seen.with(deps), idx.Shards
	for _, c := range conflicts {
		r.conflict(c, owned)
	}
	r.owners = owners{scope: r.opts.Scope, matcher: r.p.Matcher, index: r.seen.index, byDep: r.seen.byDep}
	r.p.Cache.Purge(deps)
	return deps, nil
}

// choose is the listed deployments the run deals with: not ignored, within
// its scope. The cached copies of a Director that resyncs alone are
// dropped, and, in a scoped run that is forced or a resync, those of its
// deployments.
func (r *run) choose(deps []bosh.Deployment) []bosh.Deployment {
	out := notIgnored(deps, r.p.Ignore)
	considered := len(out)
	out = r.owners.deployments(out)
	fallback := r.fleet.Feeds().Apply(r.view, out, r.p.Cache)
	r.trust = fleet.TrustRule(r.view.Report.Mode, fallback, r.p.Config.CacheTTL, r.start)
	if !r.opts.Scope.Empty() && (r.opts.Force || r.view.Report.Mode == report.FeedResync) {
		for _, d := range out {
			r.p.Cache.Forget(d.Name)
		}
	}
	r.progress.SetTotal(len(out))
	r.ledger.Count(func(s *report.Summary) {
		s.DeploymentsSeen, s.Ignored, s.OutOfScope = len(deps), len(deps)-considered, considered-len(out)
	})
	return out
}

// startWriter starts the run's writer: Vault's, or the plan in a dry run.
func (r *run) startWriter(ctx context.Context) {
	s := records.Shared{Index: r.seen.index, Base: r.seen.base, Shards: r.shards, Ledger: r.ledger, History: r.hist, Counters: r.p.Counters,
		Backups: r.p.Config.Backup.Enabled, Log: r.log}
	if r.opts.DryRun {
		r.plan = records.NewPlanWriter(s)
		r.writer = r.plan
		return
	}
	r.writer = records.NewVaultWriter(ctx, s, r.vault.Documents, r.vault.Backups, r.vault.Index, r.p.Config.BatchSize,
		r.policy, r.progress)
}

// stopped is the error of a run that ctx ended: the breaker's or the
// fence's cause when one stopped it, else err (or ctx's error when err is nil).
func stopped(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, guard.ErrCircuitOpen) || errors.Is(cause, guard.ErrLostLease) {
		return cause
	}
	if err == nil && ctx.Err() != nil {
		return fmt.Errorf("run cancelled: %w", ctx.Err())
	}
	return err
}
