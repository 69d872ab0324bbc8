package reconciler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
)

var (
	// ErrDisabled is returned by Trigger when reconciler.enabled is false.
	ErrDisabled = errors.New("reconciler is disabled")
	// ErrNotRunning is returned by Trigger when Start is not running.
	ErrNotRunning = errors.New("reconciler is not running")
	// ErrAlreadyStarted is returned by a second Start on one Manager.
	ErrAlreadyStarted = errors.New("reconciler already started")
	// ErrBadOptions is returned by New for options it cannot work with.
	ErrBadOptions = errors.New("bad reconciler options")
)

// Options configures a Manager. New fills in the defaults.
type Options struct {
	// Config tunes the reconciler. Enabled, Backup.Enabled, RetryAttempts and
	// OrphanGracePeriod are taken as given; other zero fields take the defaults
	// of config.Default(): interval 1h, max_concurrency 5, batch_size 10,
	// retry_delay 10s, cache_ttl 5m, stop_timeout 30s, backup path "backups".
	Config config.ReconcilerConfig
	// Director lists deployments and fetches manifests and VMs. Required.
	Director Director
	// Tasks finds in-flight Director tasks before an orphan is flagged.
	// Default nil: no task check (the lock and the record's last operation still count).
	Tasks Tasks
	// Store reads and writes the broker's records in Vault. Required.
	Store Store
	// Catalog holds the plans the matcher knows. Default nil: an empty catalog.
	Catalog *catalog.Catalog
	// Registerer receives the reconciler's metrics. Default nil: not registered.
	Registerer prometheus.Registerer
	// Logger receives the reconciler's logs. Default slog.Default().
	Logger *slog.Logger
	// Now tells the time. Default time.Now.
	Now func() time.Time
}

// Manager runs the reconciler: at start, every interval and on demand, one
// run at a time. It is safe for concurrent use.
type Manager struct {
	cfg     config.ReconcilerConfig
	opts    Options
	log     *slog.Logger
	scanner *scanner
	matcher *matcher
	metrics *metrics
	runLock chan struct{} // one slot, held by the run in progress
	wake    chan struct{} // tells Start that a request is pending

	mu        sync.Mutex
	started   bool
	pending   [2]*request // [0] a run, [1] a dry run, waiting for Start
	current   *run
	last      *Summary
	orphans   []Orphan
	unmatched []Unmatched
}

// request is a run asked for with Trigger, shared by every caller whose
// request was merged into it.
type request struct {
	id      string
	opts    RunOptions
	waiters []chan Summary
}

// New checks opts and returns a Manager; it does no I/O.
func New(opts Options) (*Manager, error) {
	opts = withDefaults(opts)
	if opts.Director == nil || opts.Store == nil {
		return nil, fmt.Errorf("%w: Director and Store are required", ErrBadOptions)
	}
	match, err := newMatcher(opts.Catalog, opts.Config)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadOptions, err)
	}
	met, err := newMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	return &Manager{
		cfg: opts.Config, opts: opts, log: opts.Logger,
		scanner: newScanner(opts.Director, opts.Config.CacheTTL),
		matcher: match, metrics: met,
		runLock: make(chan struct{}, 1), wake: make(chan struct{}, 1),
		orphans: []Orphan{}, unmatched: []Unmatched{},
	}, nil
}

// withDefaults is the one place defaults are filled in.
func withDefaults(o Options) Options {
	def := config.Default().Reconciler
	c := &o.Config
	c.Interval = orDuration(c.Interval, def.Interval)
	c.RetryDelay = orDuration(c.RetryDelay, def.RetryDelay)
	c.CacheTTL = orDuration(c.CacheTTL, def.CacheTTL)
	c.StopTimeout = orDuration(c.StopTimeout, def.StopTimeout)
	c.MaxConcurrency = max(c.MaxConcurrency, 0)
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = def.MaxConcurrency
	}
	if c.BatchSize <= 0 {
		c.BatchSize = def.BatchSize
	}
	c.RetryAttempts = max(c.RetryAttempts, 0)
	c.Backup.Path = cmp.Or(strings.Trim(c.Backup.Path, "/"), def.Backup.Path)
	c.OrphanGracePeriod = max(c.OrphanGracePeriod, 0)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Start runs the reconciler until ctx ends: one run at once, then one every
// Config.Interval, and those asked for with Trigger. When ctx ends it waits
// for the run in progress up to Config.StopTimeout, then cancels it (the
// instance being written is finished, nothing is left half-written) and
// returns. With reconciler.enabled false it runs nothing and just waits.
func (m *Manager) Start(ctx context.Context) error {
	if !m.cfg.Enabled {
		m.log.Info("reconciler disabled")
		<-ctx.Done()
		return nil
	}
	if err := m.setStarted(true); err != nil {
		return err
	}
	defer m.setStarted(false)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		var req *request
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
			req = m.scheduled()
		case <-m.wake:
			req = m.takePending()
		}
		if req == nil {
			continue
		}
		start := m.opts.Now()
		m.serve(ctx, req)
		if ctx.Err() != nil {
			return nil
		}
		if !req.opts.DryRun {
			timer.Reset(max(0, m.cfg.Interval-m.opts.Now().Sub(start)))
		}
		m.signalIfPending()
	}
}

// setStarted marks Start as running or not; on the way out, callers still
// waiting for a run have their channel closed without a summary.
func (m *Manager) setStarted(on bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if on && m.started {
		return ErrAlreadyStarted
	}
	m.started = on
	if !on {
		for i, p := range m.pending {
			for _, w := range p.waitersOrNil() {
				close(w)
			}
			m.pending[i] = nil
		}
	}
	return nil
}

func (r *request) waitersOrNil() []chan Summary {
	if r == nil {
		return nil
	}
	return r.waiters
}

// scheduled is the interval's run; a pending triggered run is merged into it.
func (m *Manager) scheduled() *request {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p := m.pending[0]; p != nil {
		m.pending[0] = nil
		return p
	}
	return &request{id: newRunID(), opts: RunOptions{Reason: "interval"}}
}

// takePending takes the pending run (before the pending dry run).
func (m *Manager) takePending() *request {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, p := range m.pending {
		if p != nil {
			m.pending[i] = nil
			return p
		}
	}
	return nil
}

// signalIfPending wakes Start again when requests came in during a run.
func (m *Manager) signalIfPending() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pending[0] != nil || m.pending[1] != nil {
		m.signal()
	}
}

func (m *Manager) signal() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// serve makes one run for req and hands its summary to every waiter. When
// ctx ends during the run, the run gets Config.StopTimeout to finish before
// it is cancelled.
func (m *Manager) serve(ctx context.Context, req *request) {
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	done := make(chan Summary, 1)
	go func() { done <- m.runLocked(runCtx, req.id, req.opts) }()
	var s Summary
	select {
	case s = <-done:
	case <-ctx.Done():
		s = m.stopRun(done, cancel)
	}
	for _, w := range req.waiters {
		w <- s
		close(w)
	}
}

// stopRun waits for the run up to Config.StopTimeout, then cancels it and
// waits for it to return.
func (m *Manager) stopRun(done <-chan Summary, cancel context.CancelFunc) Summary {
	m.log.Info("reconciler stopping: waiting for the run in progress", "timeout", m.cfg.StopTimeout)
	t := time.NewTimer(m.cfg.StopTimeout)
	defer t.Stop()
	select {
	case s := <-done:
		return s
	case <-t.C:
		m.log.Warn("reconciler stop timeout: cancelling the run in progress")
		cancel()
		return <-done
	}
}

// Trigger asks Start for a run and returns at once with the run's id and a
// channel that receives its summary (and is then closed; it is closed
// without a summary when the manager stops first). A run starts at once
// when none is in progress; otherwise the request is served by the next run
// after it, and requests made meanwhile are merged into that one run (dry
// runs apart from the others). Force clears the scanner's cache first.
func (m *Manager) Trigger(opts RunOptions) (string, <-chan Summary, error) {
	if !m.cfg.Enabled {
		return "", nil, ErrDisabled
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.started {
		return "", nil, ErrNotRunning
	}
	slot := 0
	if opts.DryRun {
		slot = 1
	}
	p := m.pending[slot]
	if p == nil {
		p = &request{id: newRunID(), opts: RunOptions{DryRun: opts.DryRun}}
		m.pending[slot] = p
	}
	p.opts.Force = p.opts.Force || opts.Force
	p.opts.Reason = joinReason(p.opts.Reason, opts.Reason)
	w := make(chan Summary, 1)
	p.waiters = append(p.waiters, w)
	m.signal()
	return p.id, w, nil
}

func joinReason(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}

// RunOnce makes one run now in the caller's goroutine (used by `blacksmith
// reconcile --dry-run` and the bench) and returns its summary. It waits for
// a run in progress to end first: runs never overlap. The error is set when
// the run could not be made or could not complete (listing or index failed,
// ctx ended); per-instance errors are in Summary.Errors only.
func (m *Manager) RunOnce(ctx context.Context, opts RunOptions) (Summary, error) {
	s := m.runLocked(ctx, newRunID(), opts)
	if s.aborted != nil {
		return s, s.aborted
	}
	return s, nil
}

// runLocked waits for the run lock, then makes the run.
func (m *Manager) runLocked(ctx context.Context, id string, opts RunOptions) Summary {
	select {
	case m.runLock <- struct{}{}:
	case <-ctx.Done():
		err := fmt.Errorf("waiting for the run in progress: %w", ctx.Err())
		return Summary{RunID: id, DryRun: opts.DryRun, StartedAt: m.opts.Now(), Errors: []string{err.Error()}, aborted: err}
	}
	defer func() { <-m.runLock }()
	return m.execute(ctx, id, opts)
}
