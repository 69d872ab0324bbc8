package reconciler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/upgrade"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var (
	// ErrUpgradeRunning is returned by Upgrades.Start and Run while a fleet upgrade runs.
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
	Scope report.UpgradeScope
	// Canaries, MaxInFlight, MaxFailures and AttemptLimit override the
	// configured rules when not nil.
	Canaries, MaxInFlight, MaxFailures, AttemptLimit *int
	// Trigger says who asked (UpgradeByOperator, UpgradeByCommand; the
	// background mode is UpgradeByBackground). Default UpgradeByOperator.
	Trigger string
	// Allow are the classes of guarded change the operator allows for
	// this fleet upgrade ("network", "az", ...: operation.Guarded); the
	// change guard refuses the others.
	Allow []operation.Class
	// Progress is told of each instance whose state changed (nil: nobody).
	Progress func(report.UpgradeResult)
}

// rules are the fleet rules of req: the configured ones, overridden.
func (u *Upgrades) rules(req UpgradeRequest) (report.UpgradeRules, error) {
	c := u.cfg.Upgrades
	r := report.UpgradeRules{Canaries: c.Canaries, MaxInFlight: c.MaxInFlight, MaxFailures: c.MaxFailures,
		AttemptLimit: c.AttemptLimit, RetryDelay: u.cfg.RetryDelay}
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

// Upgrades are a Manager's fleet upgrades, one at a time: run in the
// caller's goroutine (Run), started in the background (Start, and the
// background mode after each run), shown (Status).
type Upgrades struct {
	upgradeParts
	journal  *upgrade.Journal
	upgrader upgrade.Upgrader // the template of each fleet upgrade's
	window   config.Window    // when the background mode may start one

	mu      sync.Mutex
	current *upgrade.Live // the one running, else the last one
	running bool
	serving bool               // Serve runs: it takes what start is given
	start   chan *upgrade.Live // to Serve
}

// Upgrades are the Manager's fleet upgrades.
func (m *Manager) Upgrades() *Upgrades { return m.upgrades }

// upgradeParts are what the fleet upgrades are given of the Manager, each
// for what it does: the configuration, who leads, the lease a command
// holds, the run lock (an upgrade's record is marked while no run is in
// progress), the stores, the catalog and the Directors, the clock, the log
// and the metrics.
type upgradeParts struct {
	cfg       config.ReconcilerConfig
	lead      leadership
	holdLease func(context.Context) (release func(), err error)
	fence     func() error // the journal's writes once this daemon lost the lease (nil: no HA)
	runLock   chan struct{}
	state     memory.StateStore
	index     records.Index
	catalog   *catalog.Catalog
	directors *fleet.Directors
	now       func() time.Time
	log       *slog.Logger
	metrics   *metrics
}

// leadership says whether this daemon leads, and who does; *elector has it
// (nil: no HA, it always leads).
type leadership interface {
	leading() bool
	leader() (id string, since time.Time)
}

// newUpgrades are the fleet upgrades over p.
func newUpgrades(p upgradeParts, opts Options, window config.Window) *Upgrades {
	u := &Upgrades{upgradeParts: p, window: window, start: make(chan *upgrade.Live, 1)} // claim lets one in at a time
	// The journal is the leader's: a daemon that lost the lease mid-upgrade
	// leaves its entries for the new leader's fleet upgrade to finish,
	// rather than write over what that one keeps there.
	u.journal = upgrade.NewJournal(fencedState{opts.Store.State, p.fence}, opts.Config.Quarantine, opts.Now)
	s := opts.Store
	u.upgrader = upgrade.Upgrader{Records: s.Indexes, Documents: s.Documents, Backups: s.Archive, History: s.History, Journal: u.journal,
		Renderer: opts.Renderer, Hold: opts.Hold, Poll: opts.UpgradePoll, TaskTimeout: opts.Config.Upgrades.TaskTimeout,
		Now: opts.Now, Log: opts.Logger.With("part", "upgrade"), Targets: u.target, Exclusive: u.exclusive,
		PostDeploy: u.postDeploy}
	return u
}

// claim reserves the one fleet upgrade slot for live.
func (u *Upgrades) claim(live *upgrade.Live) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.running {
		return ErrUpgradeRunning
	}
	u.running, u.current = true, live
	return nil
}

func (u *Upgrades) done() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.running = false
}

// Run makes a fleet upgrade now in the caller's goroutine (`blacksmith
// upgrade-all`) and returns its report. With HA, it refuses
// (NotLeaderError) unless this daemon leads or, in a command that runs
// once, can take the reconciler lease for the fleet upgrade; a dry run
// needs no lease.
func (u *Upgrades) Run(ctx context.Context, req UpgradeRequest) (report.UpgradeReport, error) {
	live, err := u.newLive(req)
	if err != nil {
		return report.UpgradeReport{}, err
	}
	if !req.DryRun { // a dry run writes nothing: it needs no lease
		release, err := u.holdLease(ctx)
		if err != nil {
			return report.UpgradeReport{}, err
		}
		defer release()
	}
	if err := u.claim(live); err != nil {
		return report.UpgradeReport{}, err
	}
	defer u.done()
	u.fleet(live.Snapshot()).Run(ctx, live)
	return live.Snapshot(), nil
}

// Start starts a fleet upgrade in the background (POST /b/upgrades) and
// returns its report as it starts; Status shows its progress. It
// refuses while another runs (ErrUpgradeRunning), on a follower
// (NotLeaderError), and when Serve is not running (ErrNotRunning).
func (u *Upgrades) Start(req UpgradeRequest) (report.UpgradeReport, error) {
	if !u.lead.leading() {
		id, since := u.lead.leader()
		return report.UpgradeReport{}, &NotLeaderError{Leader: id, Since: since}
	}
	live, err := u.newLive(req)
	if err != nil {
		return report.UpgradeReport{}, err
	}
	if !u.isServing() {
		return report.UpgradeReport{}, ErrNotRunning
	}
	if err := u.claim(live); err != nil {
		return report.UpgradeReport{}, err
	}
	u.start <- live
	return live.Snapshot(), nil
}

// Serve makes the fleet upgrades Start and the background mode ask for,
// one at a time, until ctx ends: a part of the daemon (Loops.Upgrades),
// beside the runs. A fleet upgrade's waits end with ctx; its journal keeps
// what is under way.
func (u *Upgrades) Serve(ctx context.Context) error {
	u.mu.Lock()
	if u.serving {
		u.mu.Unlock()
		return ErrAlreadyStarted
	}
	u.serving = true
	u.mu.Unlock()
	defer func() {
		u.mu.Lock()
		u.serving = false
		u.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case live := <-u.start:
			u.fleet(live.Snapshot()).Run(ctx, live)
			u.done()
		}
	}
}

// isServing says whether Serve runs.
func (u *Upgrades) isServing() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.serving
}

// background starts the background mode's fleet upgrade after a
// complete run (reconciler.upgrades.mode auto), on the leader, inside the
// window, unless one runs: at most max_per_run instances are tried. It is
// handed to Serve (kept until Serve takes it).
func (u *Upgrades) background(s report.Summary) {
	if u.cfg.Upgrades.Mode != config.UpgradeAuto || s.DryRun || s.Aborted != nil || s.Scope != nil ||
		!u.lead.leading() || !u.window.Contains(u.now()) {
		return
	}
	live, err := u.newLive(UpgradeRequest{Trigger: report.UpgradeByBackground})
	if err != nil {
		u.log.Warn("the background fleet upgrade could not start", "error", err)
		return
	}
	if u.claim(live) != nil { // one runs: it goes on
		return
	}
	u.start <- live
}

// UpgradeStatus is what GET /b/upgrades shows.
type UpgradeStatus struct {
	// Mode is reconciler.upgrades.mode.
	Mode string `json:"mode"`
	// Current is the fleet upgrade running, else the last one since the
	// daemon started (nil: none).
	Current *report.UpgradeReport `json:"current"`
	// InFlight are the upgrades under way the journal holds (a fleet
	// upgrade cut short leaves them for the next one to finish).
	InFlight []report.UpgradeEntry `json:"in_flight"`
	// Quarantined are the instances set aside after a failed upgrade.
	Quarantined []report.UpgradeQuarantined `json:"quarantined"`
}

// Status is the fleet upgrade running or last run, the journal's upgrades
// under way and the upgrade quarantine (read from Vault).
func (u *Upgrades) Status(ctx context.Context) (UpgradeStatus, error) {
	st := UpgradeStatus{Mode: u.cfg.Upgrades.Mode, InFlight: []report.UpgradeEntry{}, Quarantined: []report.UpgradeQuarantined{}}
	u.mu.Lock()
	live := u.current
	u.mu.Unlock()
	if live != nil {
		r := live.Snapshot()
		st.Current = &r
	}
	j := upgrade.NewJournal(u.state, u.cfg.Quarantine, u.now) // as Vault has it now, not as this one last loaded it
	if err := j.Load(ctx); err != nil {
		return st, err
	}
	st.InFlight, st.Quarantined = j.InFlight(), j.Quarantine()
	return st, nil
}

// newLive is the report a fleet upgrade for req starts from.
func (u *Upgrades) newLive(req UpgradeRequest) (*upgrade.Live, error) {
	rules, err := u.rules(req)
	if err != nil {
		return nil, err
	}
	rep := report.UpgradeReport{ID: newRunID(), Trigger: req.Trigger, DryRun: req.DryRun, Rules: rules, Scope: req.Scope,
		StartedAt: u.now()}
	for _, c := range req.Allow {
		if !c.IsGuarded() {
			return nil, fmt.Errorf("%w: allow: %q is not a class of guarded change", ErrBadUpgrade, c)
		}
		rep.Allow = append(rep.Allow, string(c))
	}
	if rep.Trigger == "" {
		rep.Trigger = report.UpgradeByOperator
	}
	if rep.Trigger == report.UpgradeByBackground {
		rep.Rules.MaxInstances = u.cfg.Upgrades.MaxPerRun
	}
	progress := req.Progress
	return upgrade.NewLive(rep, func(prev string, next report.UpgradeResult) {
		u.metrics.upgradeState(prev, next.State, rep.DryRun)
		if progress != nil {
			progress(next)
		}
	}), nil
}

// fleet is what a fleet upgrade is made of. Its gate stops new starts once
// this daemon no longer leads, and, for the background mode, outside the
// window.
func (u *Upgrades) fleet(rep report.UpgradeReport) upgrade.Fleet {
	up := u.upgrader // a copy: each fleet upgrade its own
	up.DryRun = rep.DryRun
	trigger := rep.Trigger
	for _, c := range rep.Allow {
		up.Allow = append(up.Allow, operation.Class(c))
	}
	index := u.index
	gate := func() string {
		switch {
		case !u.lead.leading():
			return "this daemon no longer leads: the leader goes on"
		case trigger == report.UpgradeByBackground && !u.window.Contains(u.now()):
			return "outside the upgrade window " + u.window.String()
		}
		return ""
	}
	return upgrade.Fleet{Upgrader: &up, Journal: up.Journal, Catalog: u.catalog, First: u.directors.First(),
		Gate: gate, Log: up.Log, Index: func(ctx context.Context) (map[string]*vault.Record, error) {
			idx, err := index.Index(ctx)
			if err != nil {
				return nil, err
			}
			return idx.Records, nil
		}}
}

// target is the Director an index record names, when it can deploy.
func (u *Upgrades) target(recorded string) (upgrade.Target, bool) {
	n, ok := u.directors.Member(recorded)
	if !ok || n.Deployer == nil {
		return upgrade.Target{}, false
	}
	t := upgrade.Target{Name: n.Name, Director: n.Director, Deployer: n.Deployer, Tasks: n.Tasks}
	t.Errands, _ = n.Deployer.(upgrade.Errands) // *bosh.Client runs errands; a client that cannot fails a plan's post-deploy errands
	return t, true
}

// postDeploy are the post-deploy errands of plan planID in the catalog.
func (u *Upgrades) postDeploy(planID string) []string {
	if _, plan, ok := u.catalog.Plan(planID); ok {
		return plan.PostDeployErrands
	}
	return nil
}

// exclusive runs f while no run is in progress (it holds the run lock).
func (u *Upgrades) exclusive(ctx context.Context, f func(context.Context) error) error {
	select {
	case u.runLock <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting for the run in progress: %w", ctx.Err())
	}
	defer func() { <-u.runLock }()
	return f(ctx)
}
