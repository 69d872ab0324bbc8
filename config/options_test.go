package config_test

import (
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

// option describes one setting: its default, a value written in the file and
// a different one from the environment. $-placeholders name suite fixtures.
type option struct {
	key, env string
	get      func(*config.Config) any
	def      any
	file     string // YAML value written in the file
	fromFile any
	envVal   string
	fromEnv  any
	extra    map[string]string // environment a set value needs (its partner)
}

func expand(s string) string {
	return strings.NewReplacer(
		"$CERT", fixtures.cert, "$KEY", fixtures.key, "$CA2", fixtures.otherCert,
		"$CAPEM", fixtures.caPEM, "$CATA", fixtures.catalogA, "$CATB", fixtures.catalogB,
	).Replace(s)
}

func expandAny(v any) any {
	switch v := v.(type) {
	case string:
		return expand(v)
	case []string:
		out := make([]string, len(v))
		for i, s := range v {
			out[i] = expand(s)
		}
		return out
	}
	return v
}

func expandMap(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = expand(v)
	}
	return out
}

var options = []option{
	{"broker.max_body_bytes", "BLACKSMITH_BROKER_MAX_BODY_BYTES", func(c *config.Config) any { return c.Broker.MaxBodyBytes }, 262144, "1048576", 1048576, "65536", 65536, nil},
	{"broker.max_parameters_bytes", "BLACKSMITH_BROKER_MAX_PARAMETERS_BYTES", func(c *config.Config) any { return c.Broker.MaxParametersBytes }, 16384, "8192", 8192, "4096", 4096, nil},
	{"broker.max_parameters_depth", "BLACKSMITH_BROKER_MAX_PARAMETERS_DEPTH", func(c *config.Config) any { return c.Broker.MaxParametersDepth }, 10, "5", 5, "20", 20, nil},
	{"broker.max_id_length", "BLACKSMITH_BROKER_MAX_ID_LENGTH", func(c *config.Config) any { return c.Broker.MaxIDLength }, 64, "36", 36, "128", 128, nil},
	{"broker.read_timeout", "BLACKSMITH_BROKER_READ_TIMEOUT", func(c *config.Config) any { return c.Broker.ReadTimeout }, 30 * time.Second, "10s", 10 * time.Second, "1m", time.Minute, nil},
	{"broker.write_timeout", "BLACKSMITH_BROKER_WRITE_TIMEOUT", func(c *config.Config) any { return c.Broker.WriteTimeout }, time.Minute, "2m", 2 * time.Minute, "45s", 45 * time.Second, nil},
	{"broker.idle_timeout", "BLACKSMITH_BROKER_IDLE_TIMEOUT", func(c *config.Config) any { return c.Broker.IdleTimeout }, 2 * time.Minute, "30s", 30 * time.Second, "5m", 5 * time.Minute, nil},
	{"vault.max_record_bytes", "BLACKSMITH_VAULT_MAX_RECORD_BYTES", func(c *config.Config) any { return c.Vault.MaxRecordBytes }, 32768, "65536", 65536, "16384", 16384, nil},
	{"debug", "BLACKSMITH_DEBUG", func(c *config.Config) any { return c.Debug }, false, "true", true, "false", false, nil},
	{"broker.listen", "BLACKSMITH_BROKER_LISTEN", func(c *config.Config) any { return c.Broker.Listen }, "127.0.0.1:3000", "127.0.0.1:4000", "127.0.0.1:4000", "[::1]:5000", "[::1]:5000", nil},
	{"broker.tls.enabled", "BLACKSMITH_BROKER_TLS_ENABLED", func(c *config.Config) any { return c.Broker.TLS.Enabled }, false, "true", true, "0", false,
		map[string]string{"BLACKSMITH_BROKER_TLS_CERT": "$CERT", "BLACKSMITH_BROKER_TLS_KEY": "$KEY"}},
	{"broker.tls.cert", "BLACKSMITH_BROKER_TLS_CERT", func(c *config.Config) any { return c.Broker.TLS.Cert }, "", "$CERT", "$CERT", "$CA2", "$CA2", nil},
	{"broker.tls.key", "BLACKSMITH_BROKER_TLS_KEY", func(c *config.Config) any { return c.Broker.TLS.Key }, "", "$KEY", "$KEY", "/nowhere.invalid/key.pem", "/nowhere.invalid/key.pem", nil},
	{"vault.token", "VAULT_TOKEN", func(c *config.Config) any { return c.Vault.Token }, "", "file-token", "file-token", "env-token", "env-token", nil},
	{"vault.mount", "BLACKSMITH_VAULT_MOUNT", func(c *config.Config) any { return c.Vault.Mount }, "secret", "kv", "kv", "/kv2/", "kv2", nil},
	{"vault.ca_cert", "VAULT_CACERT", func(c *config.Config) any { return c.Vault.CACert }, "", "$CERT", "$CERT", "$CA2", "$CA2", nil},
	{"vault.skip_ssl_validation", "VAULT_SKIP_VERIFY", func(c *config.Config) any { return c.Vault.SkipSSLValidation }, false, "true", true, "false", false, nil},
	{"vault.kv_version", "BLACKSMITH_VAULT_KV_VERSION", func(c *config.Config) any { return c.Vault.KVVersion }, 0, "1", 1, "2", 2, nil},
	{"bosh.username", "BLACKSMITH_BOSH_USERNAME", func(c *config.Config) any { return c.BOSH.Username }, "", "file-user", "file-user", "env-user", "env-user",
		map[string]string{"BLACKSMITH_BOSH_PASSWORD": "pw"}},
	{"bosh.password", "BLACKSMITH_BOSH_PASSWORD", func(c *config.Config) any { return c.BOSH.Password }, "", "file-pw", "file-pw", "env-pw", "env-pw",
		map[string]string{"BLACKSMITH_BOSH_USERNAME": "admin"}},
	{"bosh.client_id", "BOSH_CLIENT", func(c *config.Config) any { return c.BOSH.ClientID }, "", "file-client", "file-client", "env-client", "env-client",
		map[string]string{"BOSH_CLIENT_SECRET": "s"}},
	{"bosh.client_secret", "BOSH_CLIENT_SECRET", func(c *config.Config) any { return c.BOSH.ClientSecret }, "", "file-secret", "file-secret", "env-secret", "env-secret",
		map[string]string{"BOSH_CLIENT": "blacksmith"}},
	{"bosh.ca_cert", "BOSH_CA_CERT", func(c *config.Config) any { return c.BOSH.CACert }, "", "$CERT", "$CERT", "$CAPEM", "$CAPEM", nil},
	{"bosh.skip_ssl_validation", "BLACKSMITH_BOSH_SKIP_SSL_VALIDATION", func(c *config.Config) any { return c.BOSH.SkipSSLValidation }, false, "true", true, "false", false, nil},
	{"bosh.timeout", "BLACKSMITH_BOSH_TIMEOUT", func(c *config.Config) any { return c.BOSH.Timeout }, 30 * time.Second, "45s", 45 * time.Second, "2m", 2 * time.Minute, nil},
	{"bosh.rate_limit", "BLACKSMITH_BOSH_RATE_LIMIT", func(c *config.Config) any { return c.BOSH.RateLimit }, 0.0, "2.5", 2.5, "7", 7.0, nil},
	{"bosh.rate_burst", "BLACKSMITH_BOSH_RATE_BURST", func(c *config.Config) any { return c.BOSH.RateBurst }, 10, "20", 20, "30", 30, nil},
	{"bosh.max_in_flight", "BLACKSMITH_BOSH_MAX_IN_FLIGHT", func(c *config.Config) any { return c.BOSH.MaxInFlight }, 10, "3", 3, "4", 4, nil},
	{"catalog.dirs", "BLACKSMITH_CATALOG_DIRS", func(c *config.Config) any { return c.Catalog.Dirs }, []string(nil), "[$CATA]", []string{"$CATA"}, "$CATA:$CATB", []string{"$CATA", "$CATB"}, nil},
	{"operator.viewer.username", "BLACKSMITH_OPERATOR_VIEWER_USERNAME", func(c *config.Config) any { return c.Operator.Viewer.Username }, "", "file-viewer", "file-viewer", "env-viewer", "env-viewer",
		map[string]string{"BLACKSMITH_OPERATOR_VIEWER_PASSWORD": "pw"}},
	{"operator.viewer.password", "BLACKSMITH_OPERATOR_VIEWER_PASSWORD", func(c *config.Config) any { return c.Operator.Viewer.Password }, "", "file-vpw", "file-vpw", "env-vpw", "env-vpw",
		map[string]string{"BLACKSMITH_OPERATOR_VIEWER_USERNAME": "auditor"}},
	{"metrics.enabled", "BLACKSMITH_METRICS_ENABLED", func(c *config.Config) any { return c.Metrics.Enabled }, true, "false", false, "true", true, nil},
	{"metrics.username", "BLACKSMITH_METRICS_USERNAME", func(c *config.Config) any { return c.Metrics.Username }, "", "file-m", "file-m", "env-m", "env-m",
		map[string]string{"BLACKSMITH_METRICS_PASSWORD": "pw"}},
	{"metrics.password", "BLACKSMITH_METRICS_PASSWORD", func(c *config.Config) any { return c.Metrics.Password }, "", "file-mpw", "file-mpw", "env-mpw", "env-mpw",
		map[string]string{"BLACKSMITH_METRICS_USERNAME": "prometheus"}},
	{"notifications.webhook_url", "BLACKSMITH_NOTIFICATIONS_WEBHOOK_URL", func(c *config.Config) any { return c.Notifications.WebhookURL }, "", "https://hooks.invalid/a", "https://hooks.invalid/a", "http://127.0.0.2/b", "http://127.0.0.2/b",
		map[string]string{"BLACKSMITH_NOTIFICATIONS_WEBHOOK_SECRET": "s"}},
	{"notifications.webhook_secret", "BLACKSMITH_NOTIFICATIONS_WEBHOOK_SECRET", func(c *config.Config) any { return c.Notifications.WebhookSecret }, "", "file-hook", "file-hook", "env-hook", "env-hook",
		map[string]string{"BLACKSMITH_NOTIFICATIONS_WEBHOOK_URL": "https://hooks.invalid/x"}},
	{"ha.enabled", "BLACKSMITH_HA_ENABLED", func(c *config.Config) any { return c.HA.Enabled }, false, "true", true, "false", false, nil},
	{"ha.lease_ttl", "BLACKSMITH_HA_LEASE_TTL", func(c *config.Config) any { return c.HA.LeaseTTL }, 30 * time.Second, "1m", time.Minute, "15s", 15 * time.Second, nil},
	{"ha.id", "BLACKSMITH_HA_ID", func(c *config.Config) any { return c.HA.ID }, "", "vm-a", "vm-a", "vm-b", "vm-b", nil},
	{"cf.api", "BLACKSMITH_CF_API", func(c *config.Config) any { return c.CF.API }, "", "https://api.sys.invalid", "https://api.sys.invalid", "http://127.0.0.2:9022/", "http://127.0.0.2:9022/",
		cfPartners("BLACKSMITH_CF_API")},
	{"cf.client_id", "BLACKSMITH_CF_CLIENT_ID", func(c *config.Config) any { return c.CF.ClientID }, "", "file-cf-client", "file-cf-client", "env-cf-client", "env-cf-client",
		cfPartners("BLACKSMITH_CF_CLIENT_ID")},
	{"cf.client_secret", "BLACKSMITH_CF_CLIENT_SECRET", func(c *config.Config) any { return c.CF.ClientSecret }, "", "file-cf-secret", "file-cf-secret", "env-cf-secret", "env-cf-secret",
		cfPartners("BLACKSMITH_CF_CLIENT_SECRET")},
	{"cf.ca_cert", "BLACKSMITH_CF_CA_CERT", func(c *config.Config) any { return c.CF.CACert }, "", "$CERT", "$CERT", "$CAPEM", "$CAPEM", cfPartners("")},
	{"cf.skip_ssl_validation", "BLACKSMITH_CF_SKIP_SSL_VALIDATION", func(c *config.Config) any { return c.CF.SkipSSLValidation }, false, "true", true, "false", false, cfPartners("")},
	{"cf.broker_name", "BLACKSMITH_CF_BROKER_NAME", func(c *config.Config) any { return c.CF.BrokerName }, "", "file-broker", "file-broker", "env-broker", "env-broker",
		cfPartners("BLACKSMITH_CF_BROKER_NAME")},
	{"cf.check_interval", "BLACKSMITH_CF_CHECK_INTERVAL", func(c *config.Config) any { return c.CF.CheckInterval }, time.Duration(0), "5m", 5 * time.Minute, "1h", time.Hour, cfPartners("")},
	{"cf.timeout", "BLACKSMITH_CF_TIMEOUT", func(c *config.Config) any { return c.CF.Timeout }, 30 * time.Second, "45s", 45 * time.Second, "2m", 2 * time.Minute, cfPartners("")},
	{"reconciler.enabled", "BLACKSMITH_RECONCILER_ENABLED", func(c *config.Config) any { return c.Reconciler.Enabled }, true, "false", false, "true", true, nil},
	{"reconciler.interval", "BLACKSMITH_RECONCILER_INTERVAL", func(c *config.Config) any { return c.Reconciler.Interval }, time.Hour, "30m", 30 * time.Minute, "15s", 15 * time.Second, nil},
	{"reconciler.watch_interval", "BLACKSMITH_RECONCILER_WATCH_INTERVAL", func(c *config.Config) any { return c.Reconciler.WatchInterval }, time.Minute, "0s", time.Duration(0), "30s", 30 * time.Second, nil},
	{"reconciler.max_concurrency", "BLACKSMITH_RECONCILER_MAX_CONCURRENCY", func(c *config.Config) any { return c.Reconciler.MaxConcurrency }, 5, "8", 8, "2", 2, nil},
	{"reconciler.batch_size", "BLACKSMITH_RECONCILER_BATCH_SIZE", func(c *config.Config) any { return c.Reconciler.BatchSize }, 10, "50", 50, "25", 25, nil},
	{"reconciler.retry_attempts", "BLACKSMITH_RECONCILER_RETRY_ATTEMPTS", func(c *config.Config) any { return c.Reconciler.RetryAttempts }, 3, "0", 0, "7", 7, nil},
	{"reconciler.retry_delay", "BLACKSMITH_RECONCILER_RETRY_DELAY", func(c *config.Config) any { return c.Reconciler.RetryDelay }, 10 * time.Second, "1m", time.Minute, "500ms", 500 * time.Millisecond, nil},
	{"reconciler.cache_ttl", "BLACKSMITH_RECONCILER_CACHE_TTL", func(c *config.Config) any { return c.Reconciler.CacheTTL }, 5 * time.Minute, "10m", 10 * time.Minute, "90s", 90 * time.Second, nil},
	{"reconciler.backup.enabled", "BLACKSMITH_RECONCILER_BACKUP_ENABLED", func(c *config.Config) any { return c.Reconciler.Backup.Enabled }, true, "false", false, "true", true, nil},
	{"reconciler.backup.retention", "BLACKSMITH_RECONCILER_BACKUP_RETENTION", func(c *config.Config) any { return c.Reconciler.Backup.Retention }, 10, "0", 0, "4", 4, nil},
	{"reconciler.backup.cleanup", "BLACKSMITH_RECONCILER_BACKUP_CLEANUP", func(c *config.Config) any { return c.Reconciler.Backup.Cleanup }, true, "false", false, "true", true, nil},
	{"reconciler.backup.path", "BLACKSMITH_RECONCILER_BACKUP_PATH", func(c *config.Config) any { return c.Reconciler.Backup.Path }, "backups", "bk/blacksmith", "bk/blacksmith", "/env-backups/", "env-backups", nil},
	{"reconciler.orphan_grace_period", "BLACKSMITH_RECONCILER_ORPHAN_GRACE_PERIOD", func(c *config.Config) any { return c.Reconciler.OrphanGracePeriod }, 10 * time.Minute, "1h", time.Hour, "0s", time.Duration(0), nil},
	{"reconciler.stop_timeout", "BLACKSMITH_RECONCILER_STOP_TIMEOUT", func(c *config.Config) any { return c.Reconciler.StopTimeout }, 30 * time.Second, "1m", time.Minute, "5s", 5 * time.Second, nil},
	{"reconciler.resync_period", "BLACKSMITH_RECONCILER_RESYNC_PERIOD", func(c *config.Config) any { return c.Reconciler.ResyncPeriod }, 24 * time.Hour, "12h", 12 * time.Hour, "6h", 6 * time.Hour, nil},
	{"reconciler.health_sweep", "BLACKSMITH_RECONCILER_HEALTH_SWEEP", func(c *config.Config) any { return c.Reconciler.HealthSweep }, 24 * time.Hour, "0s", time.Duration(0), "48h", 48 * time.Hour, nil},
	{"reconciler.health.tasks_at_once", "BLACKSMITH_RECONCILER_HEALTH_TASKS_AT_ONCE", func(c *config.Config) any { return c.Reconciler.Health.TasksAtOnce }, 1, "2", 2, "3", 3, nil},
	{"reconciler.breaker_threshold", "BLACKSMITH_RECONCILER_BREAKER_THRESHOLD", func(c *config.Config) any { return c.Reconciler.BreakerThreshold }, 20, "3", 3, "25", 25, nil},
	{"reconciler.quarantine.backoff", "BLACKSMITH_RECONCILER_QUARANTINE_BACKOFF", func(c *config.Config) any { return c.Reconciler.Quarantine.Backoff }, 15 * time.Minute, "1m", time.Minute, "5m", 5 * time.Minute, nil},
	{"reconciler.quarantine.max_backoff", "BLACKSMITH_RECONCILER_QUARANTINE_MAX_BACKOFF", func(c *config.Config) any { return c.Reconciler.Quarantine.MaxBackoff }, 24 * time.Hour, "2h", 2 * time.Hour, "3h", 3 * time.Hour, nil},
	{"reconciler.stuck_operation_after", "BLACKSMITH_RECONCILER_STUCK_OPERATION_AFTER", func(c *config.Config) any { return c.Reconciler.StuckOperationAfter }, time.Hour, "30m", 30 * time.Minute, "2h", 2 * time.Hour, nil},
	{"reconciler.history.keep", "BLACKSMITH_RECONCILER_HISTORY_KEEP", func(c *config.Config) any { return c.Reconciler.History.Keep }, 200, "0", 0, "50", 50, nil},
	{"reconciler.history.max_age", "BLACKSMITH_RECONCILER_HISTORY_MAX_AGE", func(c *config.Config) any { return c.Reconciler.History.MaxAge }, time.Duration(0), "720h", 720 * time.Hour, "24h", 24 * time.Hour, nil},
	{"reconciler.run_log", "BLACKSMITH_RECONCILER_RUN_LOG", func(c *config.Config) any { return c.Reconciler.RunLog }, 50, "10", 10, "200", 200, nil},
	{"reconciler.remediation.mode", "BLACKSMITH_RECONCILER_REMEDIATION_MODE", func(c *config.Config) any { return c.Reconciler.Remediation.Mode }, "none", "redeploy", "redeploy", "purge", "purge", nil},
	{"reconciler.remediation.min_age", "BLACKSMITH_RECONCILER_REMEDIATION_MIN_AGE", func(c *config.Config) any { return c.Reconciler.Remediation.MinAge }, 24 * time.Hour, "1h", time.Hour, "48h", 48 * time.Hour, nil},
	{"reconciler.remediation.max_per_run", "BLACKSMITH_RECONCILER_REMEDIATION_MAX_PER_RUN", func(c *config.Config) any { return c.Reconciler.Remediation.MaxPerRun }, 5, "2", 2, "20", 20, nil},
	{"reconciler.remediation.orphan_deployments", "BLACKSMITH_RECONCILER_REMEDIATION_ORPHAN_DEPLOYMENTS", func(c *config.Config) any { return c.Reconciler.Remediation.OrphanDeployments }, "report", "delete", "delete", "report", "report",
		cfPartners("")},
	{"reconciler.remediation.retirement_period", "BLACKSMITH_RECONCILER_REMEDIATION_RETIREMENT_PERIOD", func(c *config.Config) any { return c.Reconciler.Remediation.RetirementPeriod }, 168 * time.Hour, "72h", 72 * time.Hour, "30m", 30 * time.Minute, nil},
	{"reconciler.remediation.orphan_deployments_max_share", "BLACKSMITH_RECONCILER_REMEDIATION_ORPHAN_DEPLOYMENTS_MAX_SHARE", func(c *config.Config) any { return c.Reconciler.Remediation.OrphanDeploymentsMaxShare }, 0.1, "0.05", 0.05, "0.5", 0.5, nil},
	{"reconciler.upgrades.mode", "BLACKSMITH_RECONCILER_UPGRADES_MODE", func(c *config.Config) any { return c.Reconciler.Upgrades.Mode }, "report", "auto", "auto", "off", "off", nil},
	{"reconciler.upgrades.max_per_run", "BLACKSMITH_RECONCILER_UPGRADES_MAX_PER_RUN", func(c *config.Config) any { return c.Reconciler.Upgrades.MaxPerRun }, 10, "3", 3, "50", 50, nil},
	{"reconciler.upgrades.window", "BLACKSMITH_RECONCILER_UPGRADES_WINDOW", func(c *config.Config) any { return c.Reconciler.Upgrades.Window }, "", "02:00-04:00", "02:00-04:00", "22:30-01:15", "22:30-01:15", nil},
	{"reconciler.upgrades.canaries", "BLACKSMITH_RECONCILER_UPGRADES_CANARIES", func(c *config.Config) any { return c.Reconciler.Upgrades.Canaries }, 1, "0", 0, "3", 3, nil},
	{"reconciler.upgrades.max_in_flight", "BLACKSMITH_RECONCILER_UPGRADES_MAX_IN_FLIGHT", func(c *config.Config) any { return c.Reconciler.Upgrades.MaxInFlight }, 5, "10", 10, "2", 2, nil},
	{"reconciler.upgrades.max_failures", "BLACKSMITH_RECONCILER_UPGRADES_MAX_FAILURES", func(c *config.Config) any { return c.Reconciler.Upgrades.MaxFailures }, 1, "0", 0, "4", 4, nil},
	{"reconciler.upgrades.attempt_limit", "BLACKSMITH_RECONCILER_UPGRADES_ATTEMPT_LIMIT", func(c *config.Config) any { return c.Reconciler.Upgrades.AttemptLimit }, 5, "2", 2, "9", 9, nil},
	{"reconciler.upgrades.task_timeout", "BLACKSMITH_RECONCILER_UPGRADES_TASK_TIMEOUT", func(c *config.Config) any { return c.Reconciler.Upgrades.TaskTimeout }, 2 * time.Hour, "30m", 30 * time.Minute, "3h", 3 * time.Hour, nil},
	{"bosh.name", "BLACKSMITH_BOSH_NAME", func(c *config.Config) any { return c.BOSH.Name }, "default", "east", "east", "west", "west", nil},
	{"reconciler.min_confidence", "BLACKSMITH_RECONCILER_MIN_CONFIDENCE", func(c *config.Config) any { return c.Reconciler.MinConfidence }, 0.0, "0.5", 0.5, "0.9", 0.9, nil},
}

// cfPartners is the environment a cf key needs when set (cf.api with the keys
// it requires), without the variable except, which the row itself sets.
func cfPartners(except string) map[string]string {
	env := map[string]string{"BLACKSMITH_CF_API": "https://api.sys.invalid", "BLACKSMITH_CF_CLIENT_ID": "blacksmith",
		"BLACKSMITH_CF_CLIENT_SECRET": "cf-secret", "BLACKSMITH_CF_BROKER_NAME": "blacksmith"}
	delete(env, except)
	return env
}

// requiredOptions are set in every other spec; they have their own specs.
var requiredOptions = []option{
	{"broker.username", "BLACKSMITH_BROKER_USERNAME", func(c *config.Config) any { return c.Broker.Username }, "", "file-admin", "file-admin", "env-admin", "env-admin", nil},
	{"broker.password", "BLACKSMITH_BROKER_PASSWORD", func(c *config.Config) any { return c.Broker.Password }, "", "file-secret", "file-secret", "env-secret", "env-secret", nil},
	{"operator.admin.username", "BLACKSMITH_OPERATOR_ADMIN_USERNAME", func(c *config.Config) any { return c.Operator.Admin.Username }, "", "file-op", "file-op", "env-op", "env-op", nil},
	{"operator.admin.password", "BLACKSMITH_OPERATOR_ADMIN_PASSWORD", func(c *config.Config) any { return c.Operator.Admin.Password }, "", "file-op-secret", "file-op-secret", "env-op-secret", "env-op-secret", nil},
	{"vault.address", "VAULT_ADDR", func(c *config.Config) any { return c.Vault.Address }, "", "https://vault.invalid:8200", "https://vault.invalid:8200", "http://127.0.0.1:8201", "http://127.0.0.1:8201", nil},
	{"bosh.address", "BOSH_ENVIRONMENT", func(c *config.Config) any { return c.BOSH.Address }, "", "https://director.invalid:25555", "https://director.invalid:25555", "http://127.0.0.1:25556", "http://127.0.0.1:25556", nil},
}

var _ = Describe("every option", func() {
	It("is covered here, one variable per file key, as Environment lists them", func() {
		want := map[string]string{}
		for _, o := range append(append([]option{}, options...), requiredOptions...) {
			want[o.env] = o.key
		}
		got := map[string]string{}
		for _, ev := range config.Environment() {
			got[ev.Name] = ev.Key
		}
		Expect(got).To(Equal(want))
	})

	for _, o := range options {
		Describe(o.key, func() {
			It(fmt.Sprintf("defaults to %v", o.def), func() {
				c, err := config.Load("", envOf(requiredEnv()))
				Expect(err).NotTo(HaveOccurred())
				Expect(o.get(c)).To(Equal(o.def))
			})
			It("is read from the file", func() {
				path := confFile(nested(o.key, expand(o.file)))
				c, err := config.Load(path, envOf(with(requiredEnv(), expandMap(o.extra))))
				Expect(err).NotTo(HaveOccurred())
				Expect(o.get(c)).To(Equal(expandAny(o.fromFile)))
			})
			It("is read from "+o.env, func() {
				env := with(requiredEnv(), expandMap(o.extra))
				env[o.env] = expand(o.envVal)
				c, err := config.Load("", envOf(env))
				Expect(err).NotTo(HaveOccurred())
				Expect(o.get(c)).To(Equal(expandAny(o.fromEnv)))
			})
			It("takes "+o.env+" over the file", func() {
				path := confFile(nested(o.key, expand(o.file)))
				env := with(requiredEnv(), expandMap(o.extra))
				env[o.env] = expand(o.envVal)
				c, err := config.Load(path, envOf(env))
				Expect(err).NotTo(HaveOccurred())
				Expect(o.get(c)).To(Equal(expandAny(o.fromEnv)))
				Expect(o.fromEnv).NotTo(Equal(o.fromFile), "the spec must be able to tell them apart")
			})
		})
	}

	for _, o := range requiredOptions {
		Describe(o.key+" (required)", func() {
			It("is read from the file", func() {
				env := requiredEnv()
				delete(env, o.env)
				c, err := config.Load(confFile(nested(o.key, o.file)), envOf(env))
				Expect(err).NotTo(HaveOccurred())
				Expect(o.get(c)).To(Equal(o.fromFile))
			})
			It("takes "+o.env+" over the file", func() {
				env := requiredEnv()
				env[o.env] = o.envVal
				c, err := config.Load(confFile(nested(o.key, o.file)), envOf(env))
				Expect(err).NotTo(HaveOccurred())
				Expect(o.get(c)).To(Equal(o.fromEnv))
			})
			It("is a problem naming the key and the variable when missing", func() {
				env := requiredEnv()
				delete(env, o.env)
				_, err := config.Load("", envOf(env))
				Expect(problems(err)).To(ConsistOf(
					fmt.Sprintf("%s: required (set it in the file or with %s)", o.key, o.env)))
			})
		})
	}
})
