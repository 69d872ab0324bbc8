package reconciler

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/upgrade"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The fleet upgrade's types, as the operator's endpoints and commands see them.
type (
	// UpgradeReport is one fleet upgrade: its rules, scope and each instance's result.
	UpgradeReport = upgrade.Report
	// UpgradeResult is what a fleet upgrade did to one instance.
	UpgradeResult = upgrade.Result
	// UpgradeScope selects the instances of a fleet upgrade.
	UpgradeScope = upgrade.Scope
	// UpgradeRules are the fleet rules of a fleet upgrade.
	UpgradeRules = upgrade.Rules
	// UpgradeQuarantined is an instance set aside after its upgrade failed.
	UpgradeQuarantined = upgrade.Quarantined
	// UpgradeEntry is an upgrade under way, as the journal keeps it.
	UpgradeEntry = upgrade.Entry
)

var (
	// ErrUpgradeRunning is returned by StartUpgrade while a fleet upgrade runs.
	ErrUpgradeRunning = errors.New("a fleet upgrade is already running")
	// ErrBadUpgrade wraps a fleet rule out of its bounds.
	ErrBadUpgrade = errors.New("bad fleet upgrade")
	// ErrInstanceBusy is matched by the error of Options.Hold when another
	// operation holds the instance.
	ErrInstanceBusy = upgrade.ErrBusy
)

// UpgradeRequest asks for a fleet upgrade. The rules not given are
// reconciler.upgrades'.
type UpgradeRequest struct {
	// DryRun lists what would be done and changes nothing.
	DryRun bool
	// Scope selects the instances; empty: every outdated instance.
	Scope UpgradeScope
	// Canaries, MaxInFlight, MaxFailures and AttemptLimit override the
	// configured rules when not nil.
	Canaries, MaxInFlight, MaxFailures, AttemptLimit *int
	// Trigger says who asked (upgrade.ByOperator, ByCommand; the background
	// mode is ByBackground). Default ByOperator.
	Trigger string
	// Progress is told of each instance whose state changed (nil: nobody).
	Progress func(UpgradeResult)
}

// rules are the fleet rules of req: the configured ones, overridden.
func (m *Manager) rules(req UpgradeRequest) (UpgradeRules, error) {
	c := m.cfg.Upgrades
	r := UpgradeRules{Canaries: c.Canaries, MaxInFlight: c.MaxInFlight, MaxFailures: c.MaxFailures,
		AttemptLimit: c.AttemptLimit, RetryDelay: m.cfg.RetryDelay}
	set := func(dst *int, v *int, name string, least, most int) error {
		if v == nil {
			return nil
		}
		if *v < least || *v > most {
			return fmt.Errorf("%w: %s must be between %d and %d, got %d", ErrBadUpgrade, name, least, most, *v)
		}
		*dst = *v
		return nil
	}
	return r, errors.Join(
		set(&r.Canaries, req.Canaries, "canaries", 0, 1000),
		set(&r.MaxInFlight, req.MaxInFlight, "max_in_flight", 1, config.MaxUpgradesInFlight),
		set(&r.MaxFailures, req.MaxFailures, "max_failures", 0, 100000),
		set(&r.AttemptLimit, req.AttemptLimit, "attempt_limit", 1, 100))
}

// upgrades is the Manager's fleet upgrades: one at a time.
type upgrades struct {
	journal *upgrade.Journal
	mu      sync.Mutex
	current *upgrade.Live // the one running, else the last one
	running bool
	start   chan *upgrade.Live // to Start's upgrade goroutine
}

func newUpgrades(j *upgrade.Journal) *upgrades {
	return &upgrades{journal: j, start: make(chan *upgrade.Live, 1)} // claim lets one in at a time
}

// claim reserves the one fleet upgrade slot for live.
func (u *upgrades) claim(live *upgrade.Live) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.running {
		return ErrUpgradeRunning
	}
	u.running, u.current = true, live
	return nil
}

func (u *upgrades) done() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.running = false
}

// Upgrade makes a fleet upgrade now in the caller's goroutine (`blacksmith
// upgrade-all`) and returns its report. With HA, it refuses
// (NotLeaderError) unless this daemon leads or, in a command that runs
// once, can take the reconciler lease for the fleet upgrade; a dry run
// needs no lease.
func (m *Manager) Upgrade(ctx context.Context, req UpgradeRequest) (UpgradeReport, error) {
	live, err := m.newFleetUpgrade(req)
	if err != nil {
		return UpgradeReport{}, err
	}
	if !req.DryRun { // a dry run writes nothing: it needs no lease
		release, err := m.holdLease(ctx)
		if err != nil {
			return UpgradeReport{}, err
		}
		defer release()
	}
	if err := m.upgrades.claim(live); err != nil {
		return UpgradeReport{}, err
	}
	defer m.upgrades.done()
	m.fleet(req.DryRun, live.Snapshot().Trigger).Run(ctx, live)
	return live.Snapshot(), nil
}

// StartUpgrade starts a fleet upgrade in the background (POST /b/upgrades)
// and returns its report as it starts; Upgrades shows its progress. It
// refuses while another runs (ErrUpgradeRunning), on a follower
// (NotLeaderError), and when Start is not running (ErrNotRunning).
func (m *Manager) StartUpgrade(req UpgradeRequest) (UpgradeReport, error) {
	if !m.elector.leading() {
		id, since := m.elector.leader()
		return UpgradeReport{}, &NotLeaderError{Leader: id, Since: since}
	}
	live, err := m.newFleetUpgrade(req)
	if err != nil {
		return UpgradeReport{}, err
	}
	if !m.queue.isStarted() {
		return UpgradeReport{}, ErrNotRunning
	}
	if err := m.upgrades.claim(live); err != nil {
		return UpgradeReport{}, err
	}
	m.upgrades.start <- live
	return live.Snapshot(), nil
}

// runUpgrades makes the fleet upgrades StartUpgrade and the background
// mode ask for, one at a time, until ctx ends (Start owns it).
func (m *Manager) runUpgrades(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case live := <-m.upgrades.start:
			rep := live.Snapshot()
			m.fleet(rep.DryRun, rep.Trigger).Run(ctx, live)
			m.upgrades.done()
		}
	}
}

// upgradeInBackground starts the background mode's fleet upgrade after a
// complete run (reconciler.upgrades.mode auto), on the leader, inside the
// window, unless one runs: at most max_per_run instances are tried.
func (m *Manager) upgradeInBackground(s Summary) {
	if m.cfg.Upgrades.Mode != config.UpgradeAuto || s.DryRun || s.Aborted != nil || s.Scope != nil ||
		!m.elector.leading() || !m.window.Contains(m.now()) {
		return
	}
	live, err := m.newFleetUpgrade(UpgradeRequest{Trigger: upgrade.ByBackground})
	if err != nil {
		m.log.Warn("the background fleet upgrade could not start", "error", err)
		return
	}
	if m.upgrades.claim(live) != nil { // one runs: it goes on
		return
	}
	m.upgrades.start <- live
}

// UpgradeStatus is what GET /b/upgrades shows.
type UpgradeStatus struct {
	// Mode is reconciler.upgrades.mode.
	Mode string `json:"mode"`
	// Current is the fleet upgrade running, else the last one since the
	// daemon started (nil: none).
	Current *UpgradeReport `json:"current"`
	// InFlight are the upgrades under way the journal holds (a fleet
	// upgrade cut short leaves them for the next one to finish).
	InFlight []UpgradeEntry `json:"in_flight"`
	// Quarantined are the instances set aside after a failed upgrade.
	Quarantined []UpgradeQuarantined `json:"quarantined"`
}

// Upgrades is the fleet upgrade running or last run, the journal's upgrades
// under way and the upgrade quarantine (read from Vault).
func (m *Manager) Upgrades(ctx context.Context) (UpgradeStatus, error) {
	st := UpgradeStatus{Mode: m.cfg.Upgrades.Mode, InFlight: []UpgradeEntry{}, Quarantined: []UpgradeQuarantined{}}
	m.upgrades.mu.Lock()
	live := m.upgrades.current
	m.upgrades.mu.Unlock()
	if live != nil {
		r := live.Snapshot()
		st.Current = &r
	}
	j := upgrade.NewJournal(m.stores.state, m.cfg.Quarantine, m.now) // as Vault has it now
	if err := j.Load(ctx); err != nil {
		return st, err
	}
	st.InFlight, st.Quarantined = j.InFlight(), j.Quarantine()
	return st, nil
}

// newFleetUpgrade is the report a fleet upgrade for req starts from.
func (m *Manager) newFleetUpgrade(req UpgradeRequest) (*upgrade.Live, error) {
	rules, err := m.rules(req)
	if err != nil {
		return nil, err
	}
	rep := UpgradeReport{ID: newRunID(), Trigger: req.Trigger, DryRun: req.DryRun, Rules: rules, Scope: req.Scope,
		StartedAt: m.now()}
	if rep.Trigger == "" {
		rep.Trigger = upgrade.ByOperator
	}
	if rep.Trigger == upgrade.ByBackground {
		rep.Rules.MaxInstances = m.cfg.Upgrades.MaxPerRun
	}
	progress := req.Progress
	return upgrade.NewLive(rep, func(prev string, next UpgradeResult) {
		m.metrics.upgradeState(prev, next.State, rep.DryRun)
		if progress != nil {
			progress(next)
		}
	}), nil
}

// fleet is what a fleet upgrade is made of. Its gate stops new starts once
// this daemon no longer leads, and, for the background mode, outside the
// window.
func (m *Manager) fleet(dryRun bool, trigger string) upgrade.Fleet {
	u := m.upgrader // a copy: each fleet upgrade its own
	u.DryRun = dryRun
	index := m.stores.index
	gate := func() string {
		switch {
		case !m.elector.leading():
			return "this daemon no longer leads: the leader goes on"
		case trigger == upgrade.ByBackground && !m.window.Contains(m.now()):
			return "outside the upgrade window " + m.window.String()
		}
		return ""
	}
	return upgrade.Fleet{Upgrader: &u, Journal: u.Journal, Catalog: m.parts.Catalog, First: m.parts.Directors.First(),
		Gate: gate, Log: u.Log, Index: func(ctx context.Context) (map[string]*vault.Record, error) {
			idx, err := index.Index(ctx)
			if err != nil {
				return nil, err
			}
			return idx.Records, nil
		}}
}

// newUpgrader is the template of every fleet upgrade's Upgrader.
func (m *Manager) newUpgrader(opts Options, j *upgrade.Journal) upgrade.Upgrader {
	s := opts.Store
	return upgrade.Upgrader{Records: s, Documents: s, Backups: s, History: s.History, Journal: j, Renderer: opts.Renderer,
		Hold: opts.Hold, Poll: opts.UpgradePoll, TaskTimeout: m.cfg.Upgrades.TaskTimeout, Now: m.now,
		Log: m.log.With("part", "upgrade"), Targets: m.upgradeTarget, Exclusive: m.exclusive}
}

// upgradeTarget is the Director an index record names, when it can deploy.
func (m *Manager) upgradeTarget(recorded string) (upgrade.Target, bool) {
	n, ok := m.parts.Directors.Member(recorded)
	if !ok || n.Deployer == nil {
		return upgrade.Target{}, false
	}
	return upgrade.Target{Name: n.Name, Director: n.Director, Deployer: n.Deployer}, true
}

// exclusive runs f while no run is in progress (it holds the run lock).
func (m *Manager) exclusive(ctx context.Context, f func(context.Context) error) error {
	select {
	case m.runLock <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting for the run in progress: %w", ctx.Err())
	}
	defer func() { <-m.runLock }()
	return f(ctx)
}
