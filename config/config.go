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
