package config

import "time"

// Config is blacksmith's whole configuration. Load fills it from defaults,
// the file and the environment; the zero value is not meaningful (see Default).
type Config struct {
	// Debug turns on debug logging. Default false; env BLACKSMITH_DEBUG (or DEBUG).
	Debug bool `yaml:"debug"`
	// Broker is the Open Service Broker API listener.
	Broker BrokerConfig `yaml:"broker"`
	// Vault is where the broker keeps its records.
	Vault VaultConfig `yaml:"vault"`
	// BOSH is the BOSH Director the service deployments live on; in the file it may also be a list
	// of named Directors, the first of which is this one (see Directors).
	BOSH BOSHConfig `yaml:"bosh"`
	// MoreDirectors are the Directors after the first when the file's bosh is a list. Not a key of
	// its own: YAML writes them back into bosh.
	MoreDirectors []BOSHConfig `yaml:"-"`
	// Catalog says where the service and plan directories are.
	Catalog CatalogConfig `yaml:"catalog"`
	// Operator are the credentials of the operator's API (/b/*) and the dashboard, apart from the
	// broker's: the platform holds those.
	Operator OperatorConfig `yaml:"operator"`
	// Metrics is the Prometheus /metrics endpoint.
	Metrics MetricsConfig `yaml:"metrics"`
	// Reconciler tunes the loop that keeps Vault in step with the Director.
	Reconciler ReconcilerConfig `yaml:"reconciler"`
	// Notifications are the webhooks told of the reconciler's events.
	Notifications NotificationsConfig `yaml:"notifications"`
	// HA lets several daemons share one Vault mount, one of them running the reconciler.
	HA HAConfig `yaml:"ha"`
	// CF is the Cloud Controller the broker is registered with, read to cross-check the instances
	// against the platform's. Optional: without cf.api nothing reads the platform.
	CF CFConfig `yaml:"cf"`
}

// CFConfig is the Cloud Controller (API v3) the reconciler reads the platform's instances from,
// with a UAA client that has the cloud_controller.admin_read_only (or cloud_controller.global_auditor)
// scope.
type CFConfig struct {
	// API is the Cloud Controller's URL, e.g. https://api.sys.example.com. Default empty: the platform
	// is not read; env BLACKSMITH_CF_API.
	API string `yaml:"api"`
	// ClientID is the UAA client. Required with api; env BLACKSMITH_CF_CLIENT_ID.
	ClientID string `yaml:"client_id"`
	// ClientSecret is the UAA client's secret. Required with api, secret; env BLACKSMITH_CF_CLIENT_SECRET.
	ClientSecret string `yaml:"client_secret"`
	// CACert is the path of a PEM CA bundle for the Cloud Controller and its UAA, or the PEM text
	// itself. Default empty (system roots); env BLACKSMITH_CF_CA_CERT.
	CACert string `yaml:"ca_cert"`
	// SkipSSLValidation disables TLS verification. Default false; env BLACKSMITH_CF_SKIP_SSL_VALIDATION.
	SkipSSLValidation bool `yaml:"skip_ssl_validation"`
	// BrokerName is the name the broker is registered under (cf service-brokers). Required with
	// api; env BLACKSMITH_CF_BROKER_NAME.
	BrokerName string `yaml:"broker_name"`
	// CheckInterval is how often the platform is read: 0 reads it in every run, else at least 1m
	// (a run between reads keeps the last read's view and acts on none of it). Default 0; env
	// BLACKSMITH_CF_CHECK_INTERVAL.
	CheckInterval time.Duration `yaml:"check_interval"`
	// Timeout bounds one request to the Cloud Controller or its UAA. Default 30s; env BLACKSMITH_CF_TIMEOUT.
	Timeout time.Duration `yaml:"timeout"`
}

// Enabled says whether the platform is read.
func (c CFConfig) Enabled() bool { return c.API != "" }

// HAConfig is the reconciler's lease among daemons sharing a Vault mount.
type HAConfig struct {
	// Enabled makes the daemon take part in the election: only the holder of the lease runs the
	// reconciler. Needs a KV v2 mount. Default false; env BLACKSMITH_HA_ENABLED.
	Enabled bool `yaml:"enabled"`
	// LeaseTTL is how long the lease lasts unless renewed (every third of it): a dead leader is
	// replaced within it. Default 30s; env BLACKSMITH_HA_LEASE_TTL.
	LeaseTTL time.Duration `yaml:"lease_ttl"`
	// ID names this daemon among the others (unique). Default: the host name and broker.listen;
	// env BLACKSMITH_HA_ID.
	ID string `yaml:"id"`
}

// WebhookEvents are the event types a webhook may ask for (notify.Types).
var WebhookEvents = []string{"orphaned", "unorphaned", "drift", "quarantined", "conflict", "run_failed", "remediated",
	"unhealthy", "recovered", "outdated", "orphan_deployment", "binding_lost"}

// NotificationsConfig is where the reconciler's events are sent.
type NotificationsConfig struct {
	// WebhookURL is one webhook that gets every event (the environment's way to set one). Default
	// none; env BLACKSMITH_NOTIFICATIONS_WEBHOOK_URL.
	WebhookURL string `yaml:"webhook_url"`
	// WebhookSecret signs what WebhookURL gets; required with it. Default none, secret; env
	// BLACKSMITH_NOTIFICATIONS_WEBHOOK_SECRET.
	WebhookSecret string `yaml:"webhook_secret"`
	// Webhooks are receivers, each with the events it wants and its own secret. Default none; file only.
	Webhooks []WebhookConfig `yaml:"webhooks"`
}

// WebhookConfig is one webhook.
type WebhookConfig struct {
	// URL is where events are POSTed (http or https).
	URL string `yaml:"url"`
	// Events are the types it gets (see WebhookEvents); empty: every type.
	Events []string `yaml:"events"`
	// Secret is the HMAC-SHA256 key of X-Blacksmith-Signature. Required, secret.
	Secret string `yaml:"secret"`
}

// BrokerConfig is the Open Service Broker API listener.
type BrokerConfig struct {
	// Listen is the host:port to listen on. Default "127.0.0.1:3000"; env BLACKSMITH_BROKER_LISTEN.
	Listen string `yaml:"listen"`
	// Username is the basic-auth user the platform uses. Required; env BLACKSMITH_BROKER_USERNAME.
	Username string `yaml:"username"`
	// Password is the basic-auth password. Required, secret; env BLACKSMITH_BROKER_PASSWORD.
	Password string `yaml:"password"`
	// TLS optionally serves HTTPS instead of HTTP.
	TLS TLSConfig `yaml:"tls"`
	// MaxBodyBytes bounds a request body (413 beyond). Default 262144; env BLACKSMITH_BROKER_MAX_BODY_BYTES.
	MaxBodyBytes int `yaml:"max_body_bytes"`
	// MaxParametersBytes bounds the parameters of a provision, update or bind, as JSON (400 beyond).
	// Default 16384; env BLACKSMITH_BROKER_MAX_PARAMETERS_BYTES.
	MaxParametersBytes int `yaml:"max_parameters_bytes"`
	// MaxParametersDepth bounds how deeply parameters nest (400 beyond). Default 10; env BLACKSMITH_BROKER_MAX_PARAMETERS_DEPTH.
	MaxParametersDepth int `yaml:"max_parameters_depth"`
	// MaxIDLength bounds instance and binding ids (400 beyond; a UUID is 36). Default 64; env BLACKSMITH_BROKER_MAX_ID_LENGTH.
	MaxIDLength int `yaml:"max_id_length"`
	// ReadTimeout bounds reading a whole request, body included. Default 30s; env BLACKSMITH_BROKER_READ_TIMEOUT.
	ReadTimeout time.Duration `yaml:"read_timeout"`
	// WriteTimeout bounds writing an answer; POST /b/reconcile?wait= extends it by its wait.
	// Default 1m; env BLACKSMITH_BROKER_WRITE_TIMEOUT.
	WriteTimeout time.Duration `yaml:"write_timeout"`
	// IdleTimeout closes a keep-alive connection idle this long. Default 2m; env BLACKSMITH_BROKER_IDLE_TIMEOUT.
	IdleTimeout time.Duration `yaml:"idle_timeout"`
}

// TLSConfig is an optional TLS server certificate.
type TLSConfig struct {
	// Enabled serves HTTPS. Default false; env BLACKSMITH_BROKER_TLS_ENABLED.
	Enabled bool `yaml:"enabled"`
	// Cert is the path of the PEM certificate (chain). Required when enabled; env BLACKSMITH_BROKER_TLS_CERT.
	Cert string `yaml:"cert"`
	// Key is the path of the PEM private key. Required when enabled; env BLACKSMITH_BROKER_TLS_KEY.
	Key string `yaml:"key"`
}

// VaultConfig is the Vault server holding the broker's records.
type VaultConfig struct {
	// Address is Vault's URL, e.g. https://vault.example.com:8200. Required; env VAULT_ADDR.
	Address string `yaml:"address"`
	// Token authenticates to Vault. Default empty, secret; env VAULT_TOKEN.
	Token string `yaml:"token"`
	// Mount is the KV secrets engine's mount path, slashes trimmed. Default "secret"; env BLACKSMITH_VAULT_MOUNT.
	Mount string `yaml:"mount"`
	// CACert is the path of a PEM CA bundle to trust. Default empty (system roots); env VAULT_CACERT.
	CACert string `yaml:"ca_cert"`
	// SkipSSLValidation disables TLS verification. Default false; env VAULT_SKIP_VERIFY.
	SkipSSLValidation bool `yaml:"skip_ssl_validation"`
	// KVVersion is 1 or 2, or 0 to detect it from sys/mounts. Default 0; env BLACKSMITH_VAULT_KV_VERSION.
	KVVersion int `yaml:"kv_version"`
	// MaxRecordBytes bounds one instance's index record, so that no tenant can grow an index
	// shard past Vault's limits (a larger record is refused before anything is written).
	// Default 32768; env BLACKSMITH_VAULT_MAX_RECORD_BYTES.
	MaxRecordBytes int `yaml:"max_record_bytes"`
}

// BOSHConfig is the BOSH Director. Authenticate with Username/Password on a
// Director that uses basic auth, or with ClientID/ClientSecret against its UAA.
type BOSHConfig struct {
	// Name names the Director in plans (plan.yml's director), index records, metrics, logs and
	// status; with several Directors each has its own. Default "default"; env BLACKSMITH_BOSH_NAME.
	Name string `yaml:"name"`
	// Address is the Director's URL. A bare host or host:port is taken as the bosh CLI
	// takes it: https://host:25555. Required; env BOSH_ENVIRONMENT (an address, not an alias).
	Address string `yaml:"address"`
	// Username is the basic-auth user. Default empty; env BLACKSMITH_BOSH_USERNAME.
	Username string `yaml:"username"`
	// Password is the basic-auth password. Default empty, secret; env BLACKSMITH_BOSH_PASSWORD.
	Password string `yaml:"password"`
	// ClientID is the UAA client. Default empty; env BOSH_CLIENT.
	ClientID string `yaml:"client_id"`
	// ClientSecret is the UAA client's secret. Default empty, secret; env BOSH_CLIENT_SECRET.
	ClientSecret string `yaml:"client_secret"`
	// CACert is the path of a PEM CA bundle, or the PEM text itself as BOSH_CA_CERT
	// allows (see CACertPEM). Default empty (system roots); env BOSH_CA_CERT.
	CACert string `yaml:"ca_cert"`
	// SkipSSLValidation disables TLS verification. Default false; env BLACKSMITH_BOSH_SKIP_SSL_VALIDATION.
	SkipSSLValidation bool `yaml:"skip_ssl_validation"`
	// Timeout bounds one request to the Director. Default 30s; env BLACKSMITH_BOSH_TIMEOUT.
	Timeout time.Duration `yaml:"timeout"`
	// RateLimit caps requests per second to the Director; 0 turns the limit off.
	// Default 0; env BLACKSMITH_BOSH_RATE_LIMIT.
	RateLimit float64 `yaml:"rate_limit"`
	// RateBurst is how many requests may exceed RateLimit at once. Default 10; env BLACKSMITH_BOSH_RATE_BURST.
	RateBurst int `yaml:"rate_burst"`
	// MaxInFlight caps concurrent requests to the Director. Default 10; env BLACKSMITH_BOSH_MAX_IN_FLIGHT.
	MaxInFlight int `yaml:"max_in_flight"`
}

// CatalogConfig says where the forge-style service directories are.
type CatalogConfig struct {
	// Dirs are directories of <service>/service.yml and <service>/<plan>/plan.yml.
	// Default none; env BLACKSMITH_CATALOG_DIRS (colon-separated).
	Dirs []string `yaml:"dirs"`
}

// OperatorConfig are the operator's credentials: the operator's API (/b/*) and the dashboard take
// these, never the broker's (broker.username), which the platform holds.
type OperatorConfig struct {
	// Admin reads and acts (forced runs, restores, adoptions, upgrades, allowances). Required.
	Admin Credentials `yaml:"admin"`
	// Viewer only reads (GET and HEAD: the fleet, the runs, the dashboard). Optional.
	Viewer Credentials `yaml:"viewer"`
}

// Credentials are a basic-auth user and password.
type Credentials struct {
	// Username is the user. Env BLACKSMITH_OPERATOR_ADMIN_USERNAME or BLACKSMITH_OPERATOR_VIEWER_USERNAME.
	Username string `yaml:"username"`
	// Password goes with Username; secret. Env BLACKSMITH_OPERATOR_ADMIN_PASSWORD or
	// BLACKSMITH_OPERATOR_VIEWER_PASSWORD.
	Password string `yaml:"password"`
}

// MetricsConfig is the Prometheus /metrics endpoint.
type MetricsConfig struct {
	// Enabled serves /metrics. Default true; env BLACKSMITH_METRICS_ENABLED.
	Enabled bool `yaml:"enabled"`
	// Username guards /metrics with basic auth; empty leaves it open. Default empty; env BLACKSMITH_METRICS_USERNAME.
	Username string `yaml:"username"`
	// Password goes with Username. Default empty, secret; env BLACKSMITH_METRICS_PASSWORD.
	Password string `yaml:"password"`
}

// ReconcilerConfig tunes the loop that keeps Vault in step with the Director.
type ReconcilerConfig struct {
	// Enabled runs the reconciler. Default true; env BLACKSMITH_RECONCILER_ENABLED.
	Enabled bool `yaml:"enabled"`
	// Interval is the time between two runs. Default 1h; env BLACKSMITH_RECONCILER_INTERVAL.
	Interval time.Duration `yaml:"interval"`
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
	// HealthSweep is how long the reconciler takes to ask the Director for the VM states of every
	// deployment once (GET /deployments/:name/vms?format=full, a task per deployment), spread evenly
	// over the runs: each run checks its share. 0 turns the sweep off (instances named by instance or
	// VM events are still checked); otherwise at least Interval. Default 24h; env BLACKSMITH_RECONCILER_HEALTH_SWEEP.
	HealthSweep time.Duration `yaml:"health_sweep"`
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

// Default returns the configuration used for everything neither the file nor
// the environment sets. Required fields are left empty.
func Default() *Config {
	return &Config{
		Broker: BrokerConfig{Listen: "127.0.0.1:3000", MaxBodyBytes: 256 << 10, MaxParametersBytes: 16 << 10,
			MaxParametersDepth: 10, MaxIDLength: 64, ReadTimeout: 30 * time.Second, WriteTimeout: time.Minute,
			IdleTimeout: 2 * time.Minute},
		Vault:   VaultConfig{Mount: "secret", MaxRecordBytes: 32 << 10},
		BOSH:    DefaultBOSH(),
		HA:      HAConfig{LeaseTTL: 30 * time.Second},
		CF:      CFConfig{Timeout: 30 * time.Second},
		Metrics: MetricsConfig{Enabled: true},
		Reconciler: ReconcilerConfig{
			Enabled:             true,
			Interval:            time.Hour,
			MaxConcurrency:      5,
			BatchSize:           10,
			RetryAttempts:       3,
			RetryDelay:          10 * time.Second,
			CacheTTL:            5 * time.Minute,
			ResyncPeriod:        24 * time.Hour,
			HealthSweep:         24 * time.Hour,
			Backup:              BackupConfig{Enabled: true, Retention: 10, Cleanup: true, Path: "backups"},
			OrphanGracePeriod:   10 * time.Minute,
			StopTimeout:         30 * time.Second,
			BreakerThreshold:    20,
			Quarantine:          QuarantineConfig{Backoff: 15 * time.Minute, MaxBackoff: 24 * time.Hour},
			StuckOperationAfter: time.Hour,
			History:             HistoryConfig{Keep: 200},
			RunLog:              50,
			Remediation: RemediationConfig{Mode: RemediateNone, MinAge: 24 * time.Hour, MaxPerRun: 5,
				OrphanDeployments: OrphanDeploymentsReport, OrphanDeploymentsMaxShare: 0.1, RetirementPeriod: 7 * 24 * time.Hour},
			Upgrades: UpgradesConfig{Mode: UpgradeReport, MaxPerRun: 10, Canaries: 1, MaxInFlight: 5, MaxFailures: 1,
				AttemptLimit: 5, TaskTimeout: 2 * time.Hour},
		},
	}
}

// MaxDirectors bounds the Directors of a bosh list.
const MaxDirectors = 32

// DefaultBOSH is the default of one Director's section (every Director of a
// list starts from it).
func DefaultBOSH() BOSHConfig {
	return BOSHConfig{Name: "default", Timeout: 30 * time.Second, RateBurst: 10, MaxInFlight: 10}
}

// Directors are the configured Directors in order: bosh (the first), then
// MoreDirectors. Plans that name no Director are deployed by the first.
func (c *Config) Directors() []BOSHConfig {
	return append([]BOSHConfig{c.BOSH}, c.MoreDirectors...)
}
