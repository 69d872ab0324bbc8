package config

import "time"

// ReconcilerConfig tunes the loop that keeps Vault in step with the Director.
type ReconcilerConfig struct {
	// Enabled runs the reconciler. Default true; env BLACKSMITH_RECONCILER_ENABLED.
	Enabled bool `yaml:"enabled"`
	// Interval is the time between two runs. Default 1h; env BLACKSMITH_RECONCILER_INTERVAL.
	Interval time.Duration `yaml:"interval"`
	// WatchInterval is how often the leader looks at each Director's event and task feeds between runs
	// (an event page and a page of tasks: at most 2 requests per Director when nothing changed) and
	// starts a run at once when they say something changed (a run in watch mode fetches only what they
	// name). 0 turns the watch off; otherwise at least 5s. Default 1m; env BLACKSMITH_RECONCILER_WATCH_INTERVAL.
	WatchInterval time.Duration `yaml:"watch_interval"`
	// MaxConcurrency caps deployments worked on at once. Default 5; env BLACKSMITH_RECONCILER_MAX_CONCURRENCY.
	MaxConcurrency int `yaml:"max_concurrency"`
	// BatchSize is how many index changes wait before an index write (which then goes once 5s have
	// passed since the last, or the run is about to end; the rest at the end of the run).
	// Default 10; env BLACKSMITH_RECONCILER_BATCH_SIZE.
	BatchSize int `yaml:"batch_size"`
	// RetryAttempts is how often a failed step is retried; 0 = never. Default 3; env BLACKSMITH_RECONCILER_RETRY_ATTEMPTS.
	RetryAttempts int `yaml:"retry_attempts"`
	// RetryDelay is the first wait before a retry; positive. Default 10s; env BLACKSMITH_RECONCILER_RETRY_DELAY.
	RetryDelay time.Duration `yaml:"retry_delay"`
	// CacheTTL is how long a fetched manifest is trusted when the Director's event feed cannot
	// vouch for it (no feed, a gap in it). Default 5m; env BLACKSMITH_RECONCILER_CACHE_TTL.
	CacheTTL time.Duration `yaml:"cache_ttl"`
	// ResyncPeriod is how often every deployment is fetched again whatever the event feed says
	// (the safety net under the feed). Default 24h; env BLACKSMITH_RECONCILER_RESYNC_PERIOD.
	ResyncPeriod time.Duration `yaml:"resync_period"`
	// HealthSweep is how long the health loop takes to ask the Directors for the VM states of every
	// deployment once (GET /deployments/:name/vms?format=full, a task per deployment), spread evenly:
	// each Interval's share one after the other across it. 0 turns the sweep off (instances named by
	// instance, VM or alert events are still checked); otherwise at least Interval. Default 24h; env
	// BLACKSMITH_RECONCILER_HEALTH_SWEEP.
	HealthSweep time.Duration `yaml:"health_sweep"`
	// Health bounds the health loop's footprint on each Director.
	Health HealthConfig `yaml:"health"`
	// Backup says whether and how records are backed up before they change.
	Backup BackupConfig `yaml:"backup"`
	// OrphanGracePeriod is how long a record without a deployment is kept before it is
	// reported orphaned. Default 10m; env BLACKSMITH_RECONCILER_ORPHAN_GRACE_PERIOD.
	OrphanGracePeriod time.Duration `yaml:"orphan_grace_period"`
	// StopTimeout bounds shutdown of a running pass. Default 30s; env BLACKSMITH_RECONCILER_STOP_TIMEOUT.
	StopTimeout time.Duration `yaml:"stop_timeout"`
	// Releases maps a BOSH release name to a service id (matcher strategy 3). Default none; file only.
	Releases map[string]string `yaml:"releases"`
	// Rules match deployment names to plans and instances (matcher strategy 4). Default none; file only.
	Rules []Rule `yaml:"rules"`
	// Ignore are Go regular expressions matched against whole deployment names: the deployments of
	// other kinds on the Director (cf, concourse...) that the reconciler leaves alone (not fetched,
	// not unmatched, not blocking convergence). Default none; file only.
	Ignore []string `yaml:"ignore"`
	// BreakerThreshold is how many requests in a row to the Director, or to Vault, may fail before the
	// run stops issuing requests and ends as failed, naming the system (the next run tries again).
	// Default 20; env BLACKSMITH_RECONCILER_BREAKER_THRESHOLD.
	BreakerThreshold int `yaml:"breaker_threshold"`
	// Quarantine sets aside, across runs, a deployment or instance whose in-run retries are spent.
	Quarantine QuarantineConfig `yaml:"quarantine"`
	// StuckOperationAfter is how long a broker operation may stay "in progress" before the
	// reconciler settles it from the Director's task. Default 1h; env BLACKSMITH_RECONCILER_STUCK_OPERATION_AFTER.
	StuckOperationAfter time.Duration `yaml:"stuck_operation_after"`
	// History bounds each instance's append-only history in Vault.
	History HistoryConfig `yaml:"history"`
	// RunLog is how many run summaries are kept in Vault (GET /b/runs). Default 50; env BLACKSMITH_RECONCILER_RUN_LOG.
	RunLog int `yaml:"run_log"`
	// Remediation is what the reconciler does to orphans, opt-in.
	Remediation RemediationConfig `yaml:"remediation"`
	// MinConfidence is the least match confidence (0 to 1) the reconciler writes; a match below it is
	// reported, not written. Default 0 (every match); env BLACKSMITH_RECONCILER_MIN_CONFIDENCE.
	MinConfidence float64 `yaml:"min_confidence"`
	// Upgrades is what is done about instances that do not run their plan's maintenance_info version.
	Upgrades UpgradesConfig `yaml:"upgrades"`
}

// HealthConfig bounds the health loop, which asks the Directors how the instances' VMs are beside
// the runs (never within one).
type HealthConfig struct {
	// TasksAtOnce is how many vm-state tasks the loop may have on one Director at once (each takes
	// a Director worker while the agents answer; 15 s for an unresponsive one). Between 1 and 10.
	// Default 1; env BLACKSMITH_RECONCILER_HEALTH_TASKS_AT_ONCE.
	TasksAtOnce int `yaml:"tasks_at_once"`
}

// UpgradesConfig is the fleet upgrade of outdated instances: its mode and its fleet rules, the
// same for the background mode, `blacksmith upgrade-all` and POST /b/upgrades (whose flags and
// parameters override the rules).
type UpgradesConfig struct {
	// Mode is report (find and show outdated instances), auto (upgrade them after each run, within
	// the fleet rules and MaxPerRun, inside Window) or off (neither). Default report; env
	// BLACKSMITH_RECONCILER_UPGRADES_MODE.
	Mode string `yaml:"mode"`
	// MaxPerRun bounds the instances the background mode tries after one run. Default 10; env
	// BLACKSMITH_RECONCILER_UPGRADES_MAX_PER_RUN.
	MaxPerRun int `yaml:"max_per_run"`
	// Window is the daily time (UTC) the background mode may start upgrades in, "HH:MM-HH:MM" (it
	// may pass midnight, "22:00-04:00"); upgrades started inside it finish outside it. Default empty:
	// any time; env BLACKSMITH_RECONCILER_UPGRADES_WINDOW.
	Window string `yaml:"window"`
	// Canaries are upgraded first; the others wait until that many succeeded, and none starts after
	// a canary failed. 0: no canaries. Default 1; env BLACKSMITH_RECONCILER_UPGRADES_CANARIES.
	Canaries int `yaml:"canaries"`
	// MaxInFlight bounds the upgrade deploys under way at once (as many more are prepared: read, rendered, backed up). Default 5; env
	// BLACKSMITH_RECONCILER_UPGRADES_MAX_IN_FLIGHT.
	MaxInFlight int `yaml:"max_in_flight"`
	// MaxFailures stops starting upgrades once that many failed (those under way finish); 0: no
	// limit. Default 1; env BLACKSMITH_RECONCILER_UPGRADES_MAX_FAILURES.
	MaxFailures int `yaml:"max_failures"`
	// AttemptLimit is how often a fleet upgrade tries an instance whose broker operation is in
	// progress (reconciler.retry_delay apart) before it skips it. Default 5; env
	// BLACKSMITH_RECONCILER_UPGRADES_ATTEMPT_LIMIT.
	AttemptLimit int `yaml:"attempt_limit"`
	// TaskTimeout bounds the wait for one upgrade's (or rollback's) Director task; a wait cut by it
	// leaves the instance's operation in progress, finished by a later fleet upgrade. Default 2h;
	// env BLACKSMITH_RECONCILER_UPGRADES_TASK_TIMEOUT.
	TaskTimeout time.Duration `yaml:"task_timeout"`
}

// Upgrade modes.
const (
	UpgradeReport = "report"
	UpgradeAuto   = "auto"
	UpgradeOff    = "off"
)

// RemediationConfig is the opt-in remediation of orphans.
type RemediationConfig struct {
	// Mode is none, redeploy (deploy the orphan's stored manifest again) or purge (remove its records
	// after a full backup). Default none; env BLACKSMITH_RECONCILER_REMEDIATION_MODE.
	Mode string `yaml:"mode"`
	// MinAge is how long an instance must have been an orphan before it is remediated. Default 24h;
	// env BLACKSMITH_RECONCILER_REMEDIATION_MIN_AGE.
	MinAge time.Duration `yaml:"min_age"`
	// MaxPerRun bounds the orphans (and the orphan deployments) one run remediates. Default 5; env
	// BLACKSMITH_RECONCILER_REMEDIATION_MAX_PER_RUN.
	MaxPerRun int `yaml:"max_per_run"`
	// OrphanDeployments is what is done to a deployment the broker records that the platform (cf)
	// does not have: report, or delete it in two steps once the platform was read without it for
	// min_age: its VMs stopped (hard, persistent disks kept, after a full backup), then the
	// deployment deleted (as a deprovision does) once retirement_period has passed without the
	// platform listing it again (a listing starts it again). Default report; env
	// BLACKSMITH_RECONCILER_REMEDIATION_ORPHAN_DEPLOYMENTS.
	OrphanDeployments string `yaml:"orphan_deployments"`
	// RetirementPeriod is how long an orphan deployment stays stopped before it is deleted.
	// Default 168h (7 days); env BLACKSMITH_RECONCILER_REMEDIATION_RETIREMENT_PERIOD.
	RetirementPeriod time.Duration `yaml:"retirement_period"`
	// OrphanDeploymentsMaxShare is the absolute floor of retirement: when more than this share
	// of the records (0 to 1), or more than max_per_run, look like orphan deployments at once,
	// none is stopped or deleted, whatever the fleet's size (the platform read is more likely wrong than
	// the fleet); the refusal is reported. Default 0.1; env
	// BLACKSMITH_RECONCILER_REMEDIATION_ORPHAN_DEPLOYMENTS_MAX_SHARE.
	OrphanDeploymentsMaxShare float64 `yaml:"orphan_deployments_max_share"`
}

// Remediation modes.
const (
	RemediateNone     = "none"
	RemediateRedeploy = "redeploy"
	RemediatePurge    = "purge"
)

// What is done to orphan deployments (RemediationConfig.OrphanDeployments).
const (
	OrphanDeploymentsReport = "report"
	OrphanDeploymentsDelete = "delete"
)

// QuarantineConfig is the backoff across runs of an item that keeps failing.
type QuarantineConfig struct {
	// Backoff is the wait after the first failed run; it doubles with each further failed run.
	// Default 15m; env BLACKSMITH_RECONCILER_QUARANTINE_BACKOFF.
	Backoff time.Duration `yaml:"backoff"`
	// MaxBackoff caps the wait. Default 24h; env BLACKSMITH_RECONCILER_QUARANTINE_MAX_BACKOFF.
	MaxBackoff time.Duration `yaml:"max_backoff"`
}

// HistoryConfig bounds each instance's history.
type HistoryConfig struct {
	// Keep is how many events are kept per instance; 0 keeps all. Default 200; env BLACKSMITH_RECONCILER_HISTORY_KEEP.
	Keep int `yaml:"keep"`
	// MaxAge drops events older than this; 0 keeps them. Default 0; env BLACKSMITH_RECONCILER_HISTORY_MAX_AGE.
	MaxAge time.Duration `yaml:"max_age"`
}

// BackupConfig says whether and how records are backed up before they change.
type BackupConfig struct {
	// Enabled backs a record up before changing or removing it. Default true; env BLACKSMITH_RECONCILER_BACKUP_ENABLED.
	Enabled bool `yaml:"enabled"`
	// Retention is how many backups to keep per record; 0 keeps all. Default 10; env BLACKSMITH_RECONCILER_BACKUP_RETENTION.
	Retention int `yaml:"retention"`
	// Cleanup removes backups beyond Retention; false keeps all. Default true; env BLACKSMITH_RECONCILER_BACKUP_CLEANUP.
	Cleanup bool `yaml:"cleanup"`
	// Path is where backups go, under the Vault mount, slashes trimmed. Default "backups"; env BLACKSMITH_RECONCILER_BACKUP_PATH.
	Path string `yaml:"path"`
}

// Rule matches a deployment name to a plan and a service instance.
type Rule struct {
	// Name identifies the rule in logs. Optional.
	Name string `yaml:"name"`
	// Pattern is a Go regexp matched against deployment names, with the named groups
	// (?P<instance>...) and (?P<plan>...); the plan group may be left out when PlanID is set.
	Pattern string `yaml:"pattern"`
	// ServiceID is the service the matched deployments belong to. Optional.
	ServiceID string `yaml:"service_id"`
	// PlanID is the plan of the matched deployments, used when Pattern has no plan group.
	PlanID string `yaml:"plan_id"`
}
