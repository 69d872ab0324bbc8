package reconciler

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/healthloop"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/run"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Manager runs the reconciler: at start, every interval and on demand, one
// run at a time, and serves the operator's reads and actions. It is safe for
// concurrent use.
type Manager struct {
	cfg      config.ReconcilerConfig
	log      *slog.Logger
	now      func() time.Time
	parts    run.Parts // what every run is built from
	stores   stores    // the Manager's own ways into Vault
	runLog   runLog    // the run log in Vault
	metrics  *metrics
	runLock  chan struct{} // one slot, held by the run in progress (or a rollback)
	queue    *queue        // the runs asked for, waiting for the runs' loop
	lead     chan struct{} // tells the runs' loop that this daemon became the leader
	elector  *elector      // nil: no HA, this daemon always leads
	runs     *runLoop      // the runs: at once, every interval, when asked
	status   *published    // what Status shows
	upgrades *Upgrades     // the fleet upgrades
	health   HealthLoop    // the VMs' health, beside the runs
	watcher  *watcher      // the feeds between runs
}

// stores are the Manager's own ways into Vault, each what one of its
// operations uses (the runs get theirs through run.Parts).
type stores struct {
	records  recordReader      // the instance view, rollback
	metadata metadataReader    // the instance view, rollback
	history  historyStore      // the instance view, rollback, rebuild
	backups  backupStore       // the instance view, rollback, rebuild
	taker    backupTaker       // rollback
	restore  restorer          // rollback
	docs     documentLister    // rebuild
	index    records.Index     // rebuild, adopt
	state    memory.StateStore // the quarantine, in the instance view
	secrets  secretReader      // the bindings, in the instance view
	listed   *listCache        // the instance list's last read of the index
	// renderer renders an owned instance's manifest for a rollback's
	// redeploy; nil: the backup's manifest, unless recorded as drift.
	renderer ports.Renderer
	// allowances keeps an operator's allowances of guarded changes.
	allowances interface {
		PutAllowance(ctx context.Context, id string, a vault.Allowance) error
	}
}

// New checks opts and returns a Manager; it does no I/O.
func New(opts Options) (*Manager, error) {
	opts = withDefaults(opts)
	if err := opts.check(); err != nil {
		return nil, err
	}
	directors, err := fleet.New(opts.Directors)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	matcher, err := match.New(opts.Catalog, opts.Config)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	var ignore []*regexp.Regexp
	for i, p := range opts.Config.Ignore {
		re, err := config.CompileIgnore(p)
		if err != nil {
			return nil, fmt.Errorf("%w: reconciler.ignore[%d]: %w", ErrBadOptions, i, err)
		}
		ignore = append(ignore, re)
	}
	window, err := config.ParseWindow(opts.Config.Upgrades.Window)
	if err != nil {
		return nil, fmt.Errorf("%w: reconciler.upgrades.window: %w", ErrBadOptions, err)
	}
	met, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	s := opts.Store
	tracker := &health.Tracker{}
	var platformTracker *platform.Tracker
	var pm *platformMetrics
	if p := opts.Platform; p != nil {
		if p.Reader == nil || p.BrokerName == "" {
			return nil, fmt.Errorf("%w: the platform cross-check needs a reader and the broker's name", ErrBadOptions)
		}
		platformTracker = platform.NewTracker(p.Reader, p.BrokerName, p.CheckInterval, p.Requests)
		if pm, err = newPlatformMetrics(opts.Registerer); err != nil {
			return nil, err
		}
	}
	m := &Manager{
		cfg: opts.Config, log: opts.Logger, now: opts.Now, metrics: met,
		parts: run.Parts{
			Config: opts.Config, Directors: directors, Matcher: matcher, Ignore: ignore, Ops: opts.Operations, Renderer: opts.Renderer,
			Hold:     opts.Hold,
			Notifier: opts.Notifier, Counters: met, Now: opts.Now, Log: opts.Logger,
			Vault:  guard.Vault{Index: s.Indexes, Documents: s.Documents, Backups: s.Archive, Memory: s, State: s.State},
			Cache:  fleet.NewCache(max(opts.Config.CacheTTL, opts.Config.ResyncPeriod), opts.Now),
			Index:  new(run.KeptIndex),
			Health: tracker, HealthPoll: opts.HealthPoll, Catalog: opts.Catalog, Platform: platformTracker,
		},
		stores: stores{records: s.Indexes, metadata: s.Documents, history: s.History, backups: s.Archive, taker: s.Archive,
			restore: s.Restores, index: s.Indexes, docs: s.Documents, state: s.State, listed: &listCache{},
			renderer: opts.Renderer, allowances: s.Documents, secrets: s.Secrets},
		runLog:  runLog{store: s.RunLog, keep: opts.Config.RunLog, log: opts.Logger},
		runLock: make(chan struct{}, 1), queue: newQueue(), lead: make(chan struct{}, 1),
		status: newPublished(opts.Notifier, directors.First(), met, opts.Now, tracker, opts.Config.HealthSweep),
	}
	m.status.platform = pm
	if h := opts.HA; h != nil {
		m.elector = newElector(*h, opts.Logger.With("part", "ha"), opts.Now, func() {
			select {
			case m.lead <- struct{}{}:
			default:
			}
		})
		m.elector.onFollow = func(ctx context.Context) {
			m.status.follow(ctx, m.runLog)
			m.status.followHealth(ctx, m.stores.state)
		}
		m.parts.Fence = m.elector.fence
		m.runLog.fence = m.elector.fence
	}
	if err := met.leaderGauge(opts.Registerer, m.elector.leading); err != nil {
		return nil, err
	}
	hm, err := newHealthMetrics(opts.Registerer, met.unhealthy)
	if err != nil {
		return nil, err
	}
	m.health = healthloop.New(healthloop.Options{Directors: healthDirectors(directors), Tracker: tracker, Store: fencedState{s.State, m.parts.Fence},
		Notifier: opts.Notifier, Counters: hm, Period: opts.Config.HealthSweep, Slot: opts.Config.Interval,
		TasksAtOnce: opts.Config.Health.TasksAtOnce, Poll: opts.HealthPoll, Tick: opts.HealthTick, Leading: m.elector.leading,
		Now: opts.Now, Log: opts.Logger.With("part", "health")})
	looks, err := newWatchLooks(opts.Registerer)
	if err != nil {
		return nil, err
	}
	m.watcher = &watcher{directors: directors, store: s.State, every: opts.Config.WatchInterval, leading: m.elector.leading,
		idle: func() bool { return len(m.runLock) == 0 && m.queue.idle() },
		ask:  func(reason string) { _, _, _ = m.queue.add(report.RunOptions{Reason: reason}) }, log: opts.Logger.With("part", "watch"), looks: looks}
	m.upgrades = newUpgrades(upgradeParts{cfg: m.cfg, lead: m.elector, holdLease: m.holdLease, fence: m.parts.Fence,
		runLock: m.runLock, state: m.stores.state, index: m.stores.index, catalog: m.parts.Catalog, directors: m.parts.Directors,
		now: m.now, log: m.log, metrics: m.metrics}, opts, window)
	m.runs = &runLoop{cfg: m.cfg, log: m.log, now: m.now, parts: &m.parts, queue: m.queue, runLock: m.runLock, lead: m.lead,
		leading: m.elector.leading, status: m.status, runLog: m.runLog, upgrades: m.upgrades}
	return m, nil
}

// Status returns the reconciler's state.
func (m *Manager) Status() Status {
	st := m.status.snapshot()
	st.Enabled = m.cfg.Enabled
	st.Leader = m.elector.leading()
	st.Health.Loop = m.health.Status()
	if m.elector != nil {
		st.LeaderID, st.LeaderSince = m.elector.leader()
	}
	return st
}

// Runs returns the newest runs of the run log (at most limit, 0: all).
func (m *Manager) Runs(ctx context.Context, limit int) ([]report.Summary, error) {
	return memory.Runs(ctx, m.runLog.store, limit)
}
