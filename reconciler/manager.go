package reconciler

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/notify"
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

// maxConcurrencyLimit bounds Config.MaxConcurrency (the configuration's own check).
const maxConcurrencyLimit = config.MaxConcurrencyLimit

// Options configures a Manager. New fills in the defaults.
type Options struct {
	// Config tunes the reconciler. Enabled, Backup.Enabled, RetryAttempts,
	// OrphanGracePeriod, History and MinConfidence are taken as given; other
	// zero fields take the defaults of config.Default(): interval 1h,
	// max_concurrency 5 (at most 1000), batch_size 10, retry_delay 10s,
	// cache_ttl 5m, stop_timeout 30s, backup path "backups",
	// breaker_threshold 20, quarantine 15m to 24h, stuck_operation_after 1h,
	// run_log 50.
	Config config.ReconcilerConfig
	// Director lists deployments and fetches manifests and VMs. Required.
	Director Director
	// Tasks finds in-flight Director tasks before an orphan is flagged.
	// Default nil: no task check (the lock and the record's last operation still count).
	Tasks Tasks
	// Store reads and writes the broker's records in Vault. Required.
	Store Store
	// Operations settles the broker's operations that stay in progress
	// (reconciler.stuck_operation_after). Default nil: they are listed in
	// Summary.Settled and not settled.
	Operations Operations
	// Notifier is told of orphans, drift, conflicts, quarantines and failed
	// runs as they happen (webhooks). Default nil: nobody.
	Notifier Notifier
	// DirectorName names Director (bosh.name) in notifications, and in
	// index records and reports when there are several. Default "default".
	DirectorName string
	// MoreDirectors are the Directors after the first when there are
	// several: each run lists them all at once and reconciles each
	// deployment with the Director that listed it. Default none.
	MoreDirectors []NamedDirector
	// HA shares the reconciler among daemons on one Vault mount: only the
	// holder of the lease runs it. Default nil: this daemon always runs it.
	HA *HAOptions
	// Deployer deploys a backup's manifest for Rollback with redeploy.
	// Default nil: such a rollback is refused with ErrNoDeployer.
	Deployer Deployer
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
	cfg      config.ReconcilerConfig
	log      *slog.Logger
	now      func() time.Time
	parts    runParts
	runLock  chan struct{} // one slot, held by the run in progress (or a rollback)
	deployer Deployer      // nil: no rollback with redeploy
	notifier Notifier      // nil: no notifications
	wake     chan struct{} // tells Start that a request is pending
	lead     chan struct{} // tells Start that this daemon became the leader
	elector  *elector      // nil: no HA, this daemon always leads

	mu        sync.Mutex
	started   bool
	pending   [2]*request // [0] a run, [1] a dry run, waiting for Start
	current   *run
	last      *Summary
	lastFull  *Summary // the last run over the whole estate (converged, blockers)
	orphans   []Orphan
	unmatched []Unmatched
	conflicts []Conflict
	quar      []Quarantined
}

// runParts is what every run is built from: the systems the reconciler
// talks to, its configuration, and the parts that outlive a run (the
// scanner's cache, the compiled matcher, the metrics).
type runParts struct {
	cfg       config.ReconcilerConfig
	director  Director
	tasks     Tasks               // nil: no task check before an orphan is flagged
	ops       Operations          // nil: stuck operations are listed, not settled
	deployer  Deployer            // nil: no redeploy (rollback, remediation)
	deployers map[string]Deployer // by Director name (several Directors)
	more      []member            // the Directors after the first (several Directors), else nil
	fleet     *fleet              // a run's: every Director (several Directors), else nil
	first     string              // the first Director's name
	store     Store
	scanner   *scanner
	matcher   *matcher
	ignore    []*regexp.Regexp // Config.Ignore: deployments left alone
	fence     func() error     // nil: no HA; else an error once this daemon lost the lease
	metrics   *metrics
	now       func() time.Time
}

// New checks opts and returns a Manager; it does no I/O.
func New(opts Options) (*Manager, error) {
	opts = withDefaults(opts)
	if opts.Director == nil || opts.Store == nil {
		return nil, fmt.Errorf("%w: Director and Store are required", ErrBadOptions)
	}
	more, err := moreMembers(opts.DirectorName, opts.MoreDirectors)
	if err != nil {
		return nil, err
	}
	if n := opts.Config.MaxConcurrency; n > maxConcurrencyLimit {
		return nil, fmt.Errorf("%w: reconciler.max_concurrency %d is more than %d", ErrBadOptions, n, maxConcurrencyLimit)
	}
	match, err := newMatcher(opts.Catalog, opts.Config)
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
	m := &Manager{
		cfg: opts.Config, log: opts.Logger, now: opts.Now, deployer: opts.Deployer,
		notifier: opts.Notifier,
		parts: runParts{
			cfg: opts.Config, director: opts.Director, tasks: opts.Tasks, ops: opts.Operations, deployer: opts.Deployer,
			more: more, first: opts.DirectorName, deployers: deployers(opts),
			store:   opts.Store,
			scanner: newScanner(max(opts.Config.CacheTTL, opts.Config.ResyncPeriod), opts.Now), matcher: match, ignore: ignore, metrics: met, now: opts.Now,
		},
		runLock: make(chan struct{}, 1), wake: make(chan struct{}, 1), lead: make(chan struct{}, 1),
		orphans: []Orphan{}, unmatched: []Unmatched{}, conflicts: []Conflict{}, quar: []Quarantined{},
	}
	if h := opts.HA; h != nil {
		if h.Leases == nil || h.ID == "" {
			return nil, fmt.Errorf("%w: HA needs Leases and an ID", ErrBadOptions)
		}
		m.elector = newElector(*h, opts.Logger.With("part", "ha"), opts.Now, func() {
			select {
			case m.lead <- struct{}{}:
			default:
			}
		})
		m.elector.onFollow = m.followRunLog
		m.parts.fence = m.elector.fence
	}
	if err := met.leaderGauge(opts.Registerer, m.elector.leading); err != nil {
		return nil, err
	}
	return m, nil
}

// withDefaults is the one place defaults are filled in.
func withDefaults(o Options) Options {
	def := config.Default().Reconciler
	c := &o.Config
	c.Interval = orDuration(c.Interval, def.Interval)
	c.RetryDelay = orDuration(c.RetryDelay, def.RetryDelay)
	c.CacheTTL = orDuration(c.CacheTTL, def.CacheTTL)
	c.ResyncPeriod = orDuration(c.ResyncPeriod, def.ResyncPeriod)
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
	c.StuckOperationAfter = orDuration(c.StuckOperationAfter, def.StuckOperationAfter)
	c.Quarantine.Backoff = orDuration(c.Quarantine.Backoff, def.Quarantine.Backoff)
	c.Remediation.Mode = cmp.Or(c.Remediation.Mode, def.Remediation.Mode)
	if c.Remediation.MaxPerRun <= 0 {
		c.Remediation.MaxPerRun = def.Remediation.MaxPerRun
	}
	c.Quarantine.MaxBackoff = max(orDuration(c.Quarantine.MaxBackoff, def.Quarantine.MaxBackoff), c.Quarantine.Backoff)
	if c.BreakerThreshold <= 0 {
		c.BreakerThreshold = def.BreakerThreshold
	}
	if c.RunLog <= 0 {
		c.RunLog = def.RunLog
	}
	o.DirectorName = cmp.Or(o.DirectorName, "default")
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

// Status returns the reconciler's state.
func (m *Manager) Status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := Status{
		Leader:      m.elector.leading(),
		Enabled:     m.cfg.Enabled,
		Phase:       PhaseIdle,
		Metrics:     m.parts.metrics.snapshot(),
		Orphans:     slices.Clone(m.orphans),
		Unmatched:   slices.Clone(m.unmatched),
		Conflicts:   slices.Clone(m.conflicts),
		Quarantined: slices.Clone(m.quar),
		Blockers:    []string{},
	}
	if m.last != nil {
		last := *m.last
		st.LastRun = &last
	}
	if m.elector != nil {
		st.LeaderID, st.LeaderSince = m.elector.leader()
	}
	if m.lastFull != nil {
		st.Converged, st.Blockers = m.lastFull.Converged, slices.Clone(m.lastFull.Blockers)
	}
	if r := m.current; r != nil {
		st.Running, st.RunID, st.Phase, st.Progress = true, r.id, r.state.phaseNow(), r.state.progress()
	}
	return st
}

// notifyFailure tells the notifier of a run that failed after one that did
// not (a transition: a Director down for a day is announced once).
func (m *Manager) notifyFailure(s Summary) {
	if m.notifier == nil || s.Result != resultFailure || (m.last != nil && m.last.Result == resultFailure) {
		return
	}
	reason := "the run failed"
	if len(s.Errors) > 0 {
		reason = s.Errors[0]
	}
	m.notifier.Notify(notify.Event{Type: notify.RunFailed, Director: m.parts.first, Reason: reason, RunID: s.RunID,
		Time: m.now().UTC()})
}

// setCurrent publishes the run in progress for Status.
func (m *Manager) setCurrent(r *run) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.current = r
	m.parts.metrics.running.Set(boolGauge(r != nil))
}

// finished publishes a run's outcome: metrics and status (not for a dry run).
func (m *Manager) finished(r *run, s Summary) {
	if s.DryRun {
		return
	}
	m.parts.metrics.observe(s, m.now())
	orphans, unmatched := r.orphanList(), r.state.unmatchedList()
	slices.SortFunc(unmatched, func(a, b Unmatched) int { return cmp.Compare(a.Deployment, b.Deployment) })
	m.mu.Lock()
	defer m.mu.Unlock()
	m.notifyFailure(s)
	m.last = &s
	if s.Scope == nil {
		m.lastFull = &s
	}
	if s.Aborted == nil && s.Scope == nil {
		m.orphans, m.unmatched, m.conflicts = orphans, unmatched, slices.Clone(s.Conflicts)
		if r.quar.loaded {
			m.quar = r.quar.list()
		}
	}
	if s.Aborted != nil {
		m.log.Warn("reconciler run aborted", "run", s.RunID, "error", fmt.Sprint(s.Aborted))
	}
}

// moreMembers checks the Directors after the first: each with a Director
// and a name of its own.
func moreMembers(first string, more []NamedDirector) ([]member, error) {
	seen := map[string]bool{first: true}
	var out []member
	for _, d := range more {
		if d.Director == nil || d.Name == "" || seen[d.Name] {
			return nil, fmt.Errorf("%w: every further Director needs a Director and a name of its own (%q)", ErrBadOptions, d.Name)
		}
		seen[d.Name] = true
		out = append(out, member{name: d.Name, d: d.Director, tasks: d.Tasks})
	}
	return out, nil
}

// deployers are the Deployers by Director name ("" and the first's name:
// Options.Deployer).
func deployers(o Options) map[string]Deployer {
	out := map[string]Deployer{}
	if o.Deployer != nil {
		out[""], out[o.DirectorName] = o.Deployer, o.Deployer
	}
	for _, d := range o.MoreDirectors {
		if d.Deployer != nil {
			out[d.Name] = d.Deployer
		}
	}
	return out
}
