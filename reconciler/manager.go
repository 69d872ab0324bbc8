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
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/run"
)

// Manager runs the reconciler: at start, every interval and on demand, one
// run at a time, and serves the operator's reads and actions. It is safe for
// concurrent use.
type Manager struct {
	cfg     config.ReconcilerConfig
	log     *slog.Logger
	now     func() time.Time
	parts   run.Parts // what every run is built from
	stores  stores    // the Manager's own ways into Vault
	metrics *metrics
	runLock chan struct{} // one slot, held by the run in progress (or a rollback)
	queue   *queue        // the runs asked for, waiting for Start
	lead    chan struct{} // tells Start that this daemon became the leader
	elector *elector      // nil: no HA, this daemon always leads
	status  *published    // what Status shows
}

// stores are the Manager's own ways into Vault, each what one of its
// operations uses (the runs get theirs through run.Parts).
type stores struct {
	records recordReader       // the instance view, rollback
	history historyStore       // the instance view, rollback, rebuild
	backups backupStore        // the instance view, rollback, rebuild
	index   records.Index      // rebuild
	docs    documentLister     // rebuild
	runLog  memory.RunLogStore // the run log
	state   memory.StateStore  // the quarantine, in the instance view
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
	met, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	s := opts.Store
	m := &Manager{
		cfg: opts.Config, log: opts.Logger, now: opts.Now, metrics: met,
		parts: run.Parts{
			Config: opts.Config, Directors: directors, Matcher: matcher, Ignore: ignore, Ops: opts.Operations,
			Notifier: opts.Notifier, Counters: met, Now: opts.Now, Log: opts.Logger,
			Vault: guard.Vault{Index: s, Documents: s, Backups: s, Memory: s},
			Cache: fleet.NewCache(max(opts.Config.CacheTTL, opts.Config.ResyncPeriod), opts.Now),
		},
		stores:  stores{records: s, history: s.History, backups: s, index: s, docs: s, runLog: s.RunLog, state: s.State},
		runLock: make(chan struct{}, 1), queue: newQueue(), lead: make(chan struct{}, 1),
		status: newPublished(opts.Notifier, directors.First(), met, opts.Now),
	}
	if h := opts.HA; h != nil {
		m.elector = newElector(*h, opts.Logger.With("part", "ha"), opts.Now, func() {
			select {
			case m.lead <- struct{}{}:
			default:
			}
		})
		m.elector.onFollow = m.adoptNewest
		m.parts.Fence = m.elector.fence
	}
	if err := met.leaderGauge(opts.Registerer, m.elector.leading); err != nil {
		return nil, err
	}
	return m, nil
}

// Status returns the reconciler's state.
func (m *Manager) Status() Status {
	st := m.status.snapshot()
	st.Enabled = m.cfg.Enabled
	st.Leader = m.elector.leading()
	if m.elector != nil {
		st.LeaderID, st.LeaderSince = m.elector.leader()
	}
	return st
}

// execute makes one run; the caller holds the run lock.
func (m *Manager) execute(ctx context.Context, id string, opts RunOptions) Summary {
	progress := &memory.Progress{}
	m.status.setCurrent(id, progress)
	defer m.status.setCurrent("", nil)
	res := run.Run(ctx, m.parts, run.Request{ID: id, Options: opts, Known: m.status.knownConflicts(), Progress: progress})
	s := res.Summary
	if !s.DryRun {
		m.status.finished(res)
		if s.Aborted != nil {
			m.log.Warn("reconciler run aborted", "run", s.RunID, "error", fmt.Sprint(s.Aborted))
		}
		m.logRun(s)
	}
	return s
}

// logRun appends a finished run to the run log in Vault and prunes it to
// Config.RunLog; a failure is logged only. A daemon that lost the lease
// writes nothing.
func (m *Manager) logRun(s Summary) {
	if m.parts.Fence != nil && m.parts.Fence() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := memory.LogRun(ctx, m.stores.runLog, s, m.cfg.RunLog); err != nil {
		m.log.Warn("could not record the run in the run log", "run", s.RunID, "dry_run", s.DryRun, "error", err)
	}
}

// Runs returns the newest runs of the run log (at most limit, 0: all).
func (m *Manager) Runs(ctx context.Context, limit int) ([]Summary, error) {
	return memory.Runs(ctx, m.stores.runLog, limit)
}

// adoptNewest takes the newest run of the run log as the last run when it
// is newer than the one known: so that a restarted daemon's status shows
// the last run (its conflicts are not recorded again), and a daemon that
// does not lead follows the leader's runs. A failure is logged only.
func (m *Manager) adoptNewest(ctx context.Context) {
	runs, err := m.Runs(ctx, 1)
	if err != nil {
		m.log.Warn("could not read the run log (entries that could be read are used)", "error", err)
	}
	if len(runs) > 0 {
		m.status.adopt(runs[0])
	}
}
