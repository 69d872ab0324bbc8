package run

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
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
		// In the background, beside the listing; a scoped run does not hold
		// the fleet against the platform.
		if r.p.Platform != nil && r.opts.Scope.Empty() {
			b.platform = readPlatform(ctx, r.p.Platform, r.policy, r.p.Now, r.opts.Force)
		}
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
		ch := choice{ignore: r.p.Ignore}.Run(choiceIn{deps: b.deps, owners: r.owners, force: r.opts.Force, mode: r.view.Report.Mode})
		// The copies of a Director that resyncs alone go too; those of a
		// Director whose feed was not read go by cache_ttl.
		fallback := r.fleet.Feeds().Apply(r.view, ch.deps, r.p.Cache)
		r.trust = fleet.TrustRule(r.view.Report.Mode, fallback, r.p.Config.CacheTTL, r.start)
		for _, name := range ch.forget {
			r.p.Cache.Forget(name)
		}
		r.progress.SetTotal(len(ch.deps))
		r.ledger.Count(ch.count)
		b.chosen = ch.deps
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
		tell := teller{record: r.hist.Add, notify: r.hist.Notify, director: r.directorOf, now: r.p.Now, runID: r.id}
		check := crossCheck{tracker: r.p.Platform, grace: r.p.Config.OrphanGracePeriod, state: r.vault.Memory, backups: r.vault.Backups,
			retire: retirement{cfg: r.p.Config.Remediation, ops: r.p.Ops, tell: tell, log: r.log}, tell: tell, log: r.log}
		rep, errs := check.Run(ctx, crossIn{read: b.platform, seen: r.seen, claimed: b.claims.IsClaimed, outOfRun: r.fleet.Unknown,
			start: r.start, dryRun: r.opts.DryRun})
		for _, e := range errs {
			r.ledger.Fail(e.key, e.err)
		}
		if rep != nil {
			r.ledger.Count(func(s *report.Summary) { s.Platform = rep })
		}
		return nil
	}},
	{"bindings", report.PhaseBindings, true, func(ctx context.Context, r *run, _ *between) error {
		check := bindingCheck{ops: r.p.Ops, state: r.vault.Memory, record: r.hist.Add, notify: r.hist.Notify, director: r.directorOf,
			now: r.p.Now, log: r.log}
		if rep := check.Run(ctx, bindingsIn{seen: r.seen, runID: r.id}); rep != nil {
			r.ledger.Count(func(s *report.Summary) { s.Bindings = rep })
		}
		return nil
	}},
	{"quarantine", report.PhaseQuarantine, false, func(ctx context.Context, r *run, _ *between) error {
		q := quarantining{quar: r.quar, record: r.hist.Add, now: r.p.Now, log: r.log}
		out := q.Run(quarantineIn{seen: r.seen, owners: r.owners, failed: r.ledger.Failures(), transient: r.ledger.TransientFailures(),
			mayHold: r.fleet.MayHold, loaded: r.quar.Loaded(), dryRun: r.opts.DryRun})
		if out == nil {
			return nil
		}
		r.ledger.Count(out.count)
		if out.save {
			if err := r.quar.Save(ctx, r.vault.Memory); err != nil {
				r.ledger.FailUnlessStopped(ctx, "", err)
			}
		}
		return nil
	}},
	// A scoped run did not deal with every named deployment.
	{"feed marks", "", true, func(ctx context.Context, r *run, _ *between) error {
		marks := feedMarks{feeds: r.fleet.Feeds(), state: r.vault.Memory, now: r.p.Now, log: r.log}
		marks.Run(ctx, feedMarksIn{seen: r.seen, fetched: r.ledger.WasFetched})
		return nil
	}},
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
	{"outdated", report.PhaseOutdated, true, func(ctx context.Context, r *run, b *between) error {
		down := func(name string) bool {
			return slices.ContainsFunc(r.fleet.Reports(), func(d report.DirectorReport) bool { return d.Name == name && !d.Listed })
		}
		look := outdatedLook{catalog: r.p.Catalog, state: r.vault.Memory, notify: r.hist.Notify, director: r.directorOf, now: r.p.Now,
			log: r.log, behind: behindLook{cache: r.p.Cache, trust: r.trust, directors: r.p.Directors, down: down, log: r.log}}
		rep, problems := look.Run(ctx, outdatedIn{seen: r.seen, deps: b.deps, runID: r.id})
		for _, err := range problems {
			r.ledger.Fail("", err)
		}
		if rep != nil {
			r.ledger.Count(func(s *report.Summary) { s.Outdated = rep })
		}
		return nil
	}},
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
