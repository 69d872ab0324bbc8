package reconciler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/redeploy"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The reconciler's errors. ErrCircuitOpen, ErrLostLease, ErrNoDeployer
// and ErrRollback (and ErrInstanceBusy, upgrades.go) are the stages'
// sentinel errors under internal/, named here on purpose rather than moved:
// a sentinel is matched by identity (errors.Is), so it must be one value,
// made where the stage that returns it lives, and the caller matches it
// where it meets the reconciler's methods (as os.ErrNotExist is
// fs.ErrNotExist). They are values, not types: the reconciler names no
// internal type.
var (
	// ErrDisabled is returned by Trigger when reconciler.enabled is false.
	ErrDisabled = errors.New("reconciler is disabled")
	// ErrNotRunning is returned by Trigger when the runs' loop is not served.
	ErrNotRunning = errors.New("reconciler is not running")
	// ErrAlreadyStarted is returned by a part (Loops) served twice at once.
	ErrAlreadyStarted = errors.New("reconciler already started")
	// ErrBadOptions is returned by New for options it cannot work with.
	ErrBadOptions = errors.New("bad reconciler options")
	// ErrCircuitOpen is the cause of a run stopped by a circuit breaker: the
	// Director, or Vault, failed Config.BreakerThreshold requests in a row.
	ErrCircuitOpen = guard.ErrCircuitOpen
	// ErrLostLease is the cause of a run stopped because its daemon no
	// longer holds the lease: it writes nothing more.
	ErrLostLease = guard.ErrLostLease
	// ErrNoDeployer is returned by a redeploy (Rollback with redeploy, a
	// remediation) of an instance whose Director has no Deployer.
	ErrNoDeployer = redeploy.ErrNoDeployer
	// ErrRollback wraps what makes a backup unfit for a redeploy: no
	// manifest, a manifest for another deployment, a failed task.
	ErrRollback = redeploy.ErrRefused
)

// maxConcurrencyLimit bounds Config.MaxConcurrency (the configuration's own check).
const maxConcurrencyLimit = config.MaxConcurrencyLimit

// defaultDirectorName names a single Director configured without a name.
const defaultDirectorName = "default"

// Options configures a Manager. New fills in the defaults (withDefaults).
type Options struct {
	// Config tunes the reconciler. Enabled, Backup.Enabled, RetryAttempts,
	// OrphanGracePeriod, History, MinConfidence, HealthSweep (0: no
	// sweep), Upgrades.Canaries and Upgrades.MaxFailures (0: none, no
	// limit) and Upgrades.Window are taken as given; other
	// zero fields take the defaults of config.Default(): interval 1h,
	// max_concurrency 5 (at most 1000), batch_size 10, retry_delay 10s,
	// cache_ttl 5m, stop_timeout 30s, backup path "backups",
	// breaker_threshold 20, quarantine 15m to 24h, stuck_operation_after 1h,
	// run_log 50, upgrades: mode report, max_in_flight 5, attempt_limit 5,
	// max_per_run 10, task_timeout 2h.
	Config config.ReconcilerConfig
	// Directors are the Directors to reconcile, in configuration order: the
	// first is the default (plans that name none deploy there). Each run
	// lists them all at once and reconciles each deployment with the
	// Director that listed it. Required: at least one; a single one named ""
	// is named "default", each of several needs a name of its own.
	Directors []ports.NamedDirector
	// Store reads and writes the broker's records in Vault. Required.
	Store *vault.Store
	// Operations settles the broker's operations that stay in progress
	// (reconciler.stuck_operation_after). Default nil: they are listed in
	// Summary.Settled and not settled.
	Operations ports.Operations
	// Renderer renders an owned instance's manifest as the broker does, for
	// the redeploys (remediation, rollback with redeploy): only what the
	// broker renders is deployed for an owned instance. Default nil: a
	// manifest Vault (or the backup) keeps is deployed unless it is one
	// recorded as drift.
	Renderer ports.Renderer
	// Notifier is told of orphans, drift, conflicts, quarantines and failed
	// runs as they happen (webhooks). Default nil: nobody.
	Notifier ports.Notifier
	// HA shares the reconciler among daemons on one Vault mount: only the
	// holder of the lease runs it. Default nil: this daemon always runs it.
	HA *HAOptions
	// Catalog holds the plans the matcher knows. Default nil: an empty catalog.
	Catalog *catalog.Catalog
	// Registerer receives the reconciler's metrics. Default nil: not registered.
	Registerer prometheus.Registerer
	// Logger receives the reconciler's logs. Default slog.Default().
	Logger *slog.Logger
	// Now tells the time. Default time.Now.
	Now func() time.Time
	// HealthPoll is how often the task that reads a deployment's VM states
	// is polled (the bosh CLI polls every 0.5 s). Default 500ms.
	HealthPoll time.Duration
	// HealthTick is how often the health loop looks whether a vm-state
	// task may start. Default 1s.
	HealthTick time.Duration
	// Hold holds an instance against the broker's operations while a fleet
	// upgrade starts or records its upgrade (the broker's lock, and its
	// lease with HA); an error matching ErrInstanceBusy says another
	// operation holds it. Default nil: only the record's operation, written
	// by check-and-set, keeps the broker off the instance.
	Hold func(ctx context.Context, id string) (context.Context, func(), error)
	// Platform turns the platform cross-check on. Default nil: the
	// platform is not read.
	Platform *PlatformOptions
	// UpgradePoll is how often a fleet upgrade asks about its tasks.
	// Default 1s.
	UpgradePoll time.Duration
}

// defaultHealthPoll is Options.HealthPoll's default.
const defaultHealthPoll = 500 * time.Millisecond

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
	if len(o.Directors) == 1 && o.Directors[0].Name == "" {
		o.Directors = []ports.NamedDirector{o.Directors[0]}
		o.Directors[0].Name = defaultDirectorName
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.HealthPoll = orDuration(o.HealthPoll, defaultHealthPoll)
	o.HealthTick = orDuration(o.HealthTick, time.Second)
	o.UpgradePoll = orDuration(o.UpgradePoll, time.Second)
	u, udef := &o.Config.Upgrades, def.Upgrades
	u.Mode = cmp.Or(u.Mode, udef.Mode)
	u.MaxInFlight = cmp.Or(max(u.MaxInFlight, 0), udef.MaxInFlight)
	u.AttemptLimit = cmp.Or(max(u.AttemptLimit, 0), udef.AttemptLimit)
	u.MaxPerRun = cmp.Or(max(u.MaxPerRun, 0), udef.MaxPerRun)
	u.TaskTimeout = orDuration(u.TaskTimeout, udef.TaskTimeout)
	return o
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// check says what New cannot work with.
func (o Options) check() error {
	if len(o.Directors) == 0 || o.Store == nil {
		return fmt.Errorf("%w: a Director and the Store are required", ErrBadOptions)
	}
	if n := o.Config.MaxConcurrency; n > maxConcurrencyLimit {
		return fmt.Errorf("%w: reconciler.max_concurrency %d is more than %d", ErrBadOptions, n, maxConcurrencyLimit)
	}
	if h := o.HA; h != nil && (h.Leases == nil || h.ID == "") {
		return fmt.Errorf("%w: HA needs Leases and an ID", ErrBadOptions)
	}
	return nil
}
