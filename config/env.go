package config

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// EnvVar ties an environment variable to the file key it overrides.
type EnvVar struct {
	// Name is the variable, e.g. BLACKSMITH_RECONCILER_INTERVAL.
	Name string
	// Key is the dotted file key, e.g. reconciler.interval.
	Key string
}

// envVars has one variable per scalar key: the Vault and BOSH CLIs' names where
// they have one, BLACKSMITH_<SECTION>_<KEY> for the rest.
var envVars = []EnvVar{
	{"BLACKSMITH_DEBUG", "debug"},
	{"BLACKSMITH_BROKER_LISTEN", "broker.listen"},
	{"BLACKSMITH_BROKER_USERNAME", "broker.username"},
	{"BLACKSMITH_BROKER_PASSWORD", "broker.password"},
	{"BLACKSMITH_BROKER_TLS_ENABLED", "broker.tls.enabled"},
	{"BLACKSMITH_BROKER_TLS_CERT", "broker.tls.cert"},
	{"BLACKSMITH_BROKER_TLS_KEY", "broker.tls.key"},
	{"BLACKSMITH_BROKER_MAX_BODY_BYTES", "broker.max_body_bytes"},
	{"BLACKSMITH_BROKER_MAX_PARAMETERS_BYTES", "broker.max_parameters_bytes"},
	{"BLACKSMITH_BROKER_MAX_PARAMETERS_DEPTH", "broker.max_parameters_depth"},
	{"BLACKSMITH_BROKER_MAX_ID_LENGTH", "broker.max_id_length"},
	{"BLACKSMITH_BROKER_READ_TIMEOUT", "broker.read_timeout"},
	{"BLACKSMITH_BROKER_WRITE_TIMEOUT", "broker.write_timeout"},
	{"BLACKSMITH_BROKER_IDLE_TIMEOUT", "broker.idle_timeout"},
	{"VAULT_ADDR", "vault.address"},
	{"VAULT_TOKEN", "vault.token"},
	{"BLACKSMITH_VAULT_MOUNT", "vault.mount"},
	{"VAULT_CACERT", "vault.ca_cert"},
	{"VAULT_SKIP_VERIFY", "vault.skip_ssl_validation"},
	{"BLACKSMITH_VAULT_KV_VERSION", "vault.kv_version"},
	{"BLACKSMITH_VAULT_MAX_RECORD_BYTES", "vault.max_record_bytes"},
	{"BLACKSMITH_BOSH_NAME", "bosh.name"},
	{"BOSH_ENVIRONMENT", "bosh.address"},
	{"BLACKSMITH_BOSH_USERNAME", "bosh.username"},
	{"BLACKSMITH_BOSH_PASSWORD", "bosh.password"},
	{"BOSH_CLIENT", "bosh.client_id"},
	{"BOSH_CLIENT_SECRET", "bosh.client_secret"},
	{"BOSH_CA_CERT", "bosh.ca_cert"},
	{"BLACKSMITH_BOSH_SKIP_SSL_VALIDATION", "bosh.skip_ssl_validation"},
	{"BLACKSMITH_BOSH_TIMEOUT", "bosh.timeout"},
	{"BLACKSMITH_BOSH_RATE_LIMIT", "bosh.rate_limit"},
	{"BLACKSMITH_BOSH_RATE_BURST", "bosh.rate_burst"},
	{"BLACKSMITH_BOSH_MAX_IN_FLIGHT", "bosh.max_in_flight"},
	{"BLACKSMITH_CATALOG_DIRS", "catalog.dirs"},
	{"BLACKSMITH_OPERATOR_ADMIN_USERNAME", "operator.admin.username"},
	{"BLACKSMITH_OPERATOR_ADMIN_PASSWORD", "operator.admin.password"},
	{"BLACKSMITH_OPERATOR_VIEWER_USERNAME", "operator.viewer.username"},
	{"BLACKSMITH_OPERATOR_VIEWER_PASSWORD", "operator.viewer.password"},
	{"BLACKSMITH_METRICS_ENABLED", "metrics.enabled"},
	{"BLACKSMITH_METRICS_USERNAME", "metrics.username"},
	{"BLACKSMITH_METRICS_PASSWORD", "metrics.password"},
	{"BLACKSMITH_NOTIFICATIONS_WEBHOOK_URL", "notifications.webhook_url"},
	{"BLACKSMITH_NOTIFICATIONS_WEBHOOK_SECRET", "notifications.webhook_secret"},
	{"BLACKSMITH_HA_ENABLED", "ha.enabled"},
	{"BLACKSMITH_HA_LEASE_TTL", "ha.lease_ttl"},
	{"BLACKSMITH_HA_ID", "ha.id"},
	{"BLACKSMITH_CF_API", "cf.api"},
	{"BLACKSMITH_CF_CLIENT_ID", "cf.client_id"},
	{"BLACKSMITH_CF_CLIENT_SECRET", "cf.client_secret"},
	{"BLACKSMITH_CF_CA_CERT", "cf.ca_cert"},
	{"BLACKSMITH_CF_SKIP_SSL_VALIDATION", "cf.skip_ssl_validation"},
	{"BLACKSMITH_CF_BROKER_NAME", "cf.broker_name"},
	{"BLACKSMITH_CF_CHECK_INTERVAL", "cf.check_interval"},
	{"BLACKSMITH_CF_TIMEOUT", "cf.timeout"},
	{"BLACKSMITH_RECONCILER_ENABLED", "reconciler.enabled"},
	{"BLACKSMITH_RECONCILER_INTERVAL", "reconciler.interval"},
	{"BLACKSMITH_RECONCILER_WATCH_INTERVAL", "reconciler.watch_interval"},
	{"BLACKSMITH_RECONCILER_MAX_CONCURRENCY", "reconciler.max_concurrency"},
	{"BLACKSMITH_RECONCILER_BATCH_SIZE", "reconciler.batch_size"},
	{"BLACKSMITH_RECONCILER_RETRY_ATTEMPTS", "reconciler.retry_attempts"},
	{"BLACKSMITH_RECONCILER_RETRY_DELAY", "reconciler.retry_delay"},
	{"BLACKSMITH_RECONCILER_CACHE_TTL", "reconciler.cache_ttl"},
	{"BLACKSMITH_RECONCILER_RESYNC_PERIOD", "reconciler.resync_period"},
	{"BLACKSMITH_RECONCILER_HEALTH_SWEEP", "reconciler.health_sweep"},
	{"BLACKSMITH_RECONCILER_HEALTH_TASKS_AT_ONCE", "reconciler.health.tasks_at_once"},
	{"BLACKSMITH_RECONCILER_BACKUP_ENABLED", "reconciler.backup.enabled"},
	{"BLACKSMITH_RECONCILER_BACKUP_RETENTION", "reconciler.backup.retention"},
	{"BLACKSMITH_RECONCILER_BACKUP_CLEANUP", "reconciler.backup.cleanup"},
	{"BLACKSMITH_RECONCILER_BACKUP_PATH", "reconciler.backup.path"},
	{"BLACKSMITH_RECONCILER_ORPHAN_GRACE_PERIOD", "reconciler.orphan_grace_period"},
	{"BLACKSMITH_RECONCILER_STOP_TIMEOUT", "reconciler.stop_timeout"},
	{"BLACKSMITH_RECONCILER_BREAKER_THRESHOLD", "reconciler.breaker_threshold"},
	{"BLACKSMITH_RECONCILER_QUARANTINE_BACKOFF", "reconciler.quarantine.backoff"},
	{"BLACKSMITH_RECONCILER_QUARANTINE_MAX_BACKOFF", "reconciler.quarantine.max_backoff"},
	{"BLACKSMITH_RECONCILER_STUCK_OPERATION_AFTER", "reconciler.stuck_operation_after"},
	{"BLACKSMITH_RECONCILER_HISTORY_KEEP", "reconciler.history.keep"},
	{"BLACKSMITH_RECONCILER_HISTORY_MAX_AGE", "reconciler.history.max_age"},
	{"BLACKSMITH_RECONCILER_RUN_LOG", "reconciler.run_log"},
	{"BLACKSMITH_RECONCILER_MIN_CONFIDENCE", "reconciler.min_confidence"},
	{"BLACKSMITH_RECONCILER_REMEDIATION_MODE", "reconciler.remediation.mode"},
	{"BLACKSMITH_RECONCILER_REMEDIATION_MIN_AGE", "reconciler.remediation.min_age"},
	{"BLACKSMITH_RECONCILER_REMEDIATION_MAX_PER_RUN", "reconciler.remediation.max_per_run"},
	{"BLACKSMITH_RECONCILER_REMEDIATION_ORPHAN_DEPLOYMENTS", "reconciler.remediation.orphan_deployments"},
	{"BLACKSMITH_RECONCILER_REMEDIATION_ORPHAN_DEPLOYMENTS_MAX_SHARE", "reconciler.remediation.orphan_deployments_max_share"},
	{"BLACKSMITH_RECONCILER_REMEDIATION_RETIREMENT_PERIOD", "reconciler.remediation.retirement_period"},
	{"BLACKSMITH_RECONCILER_UPGRADES_MODE", "reconciler.upgrades.mode"},
	{"BLACKSMITH_RECONCILER_UPGRADES_MAX_PER_RUN", "reconciler.upgrades.max_per_run"},
	{"BLACKSMITH_RECONCILER_UPGRADES_WINDOW", "reconciler.upgrades.window"},
	{"BLACKSMITH_RECONCILER_UPGRADES_CANARIES", "reconciler.upgrades.canaries"},
	{"BLACKSMITH_RECONCILER_UPGRADES_MAX_IN_FLIGHT", "reconciler.upgrades.max_in_flight"},
	{"BLACKSMITH_RECONCILER_UPGRADES_MAX_FAILURES", "reconciler.upgrades.max_failures"},
	{"BLACKSMITH_RECONCILER_UPGRADES_ATTEMPT_LIMIT", "reconciler.upgrades.attempt_limit"},
	{"BLACKSMITH_RECONCILER_UPGRADES_TASK_TIMEOUT", "reconciler.upgrades.task_timeout"},
}

// Environment returns every environment variable Load reads, with the file
// key each one overrides. DEBUG, an alias of BLACKSMITH_DEBUG, is not listed.
func Environment() []EnvVar { return slices.Clone(envVars) }

// applyEnv sets every key whose variable is set and not empty, recording the
// variable in origin. A value that does not parse is a problem naming the variable.
func applyEnv(c *Config, env func(string) (string, bool), problems *Problems, origin map[string]string) {
	for _, ev := range envVars {
		val, ok := env(ev.Name)
		if !ok || val == "" {
			continue
		}
		field, _ := fieldByPath(reflect.ValueOf(c).Elem(), ev.Key)
		if field.Kind() == reflect.Slice {
			field.Set(reflect.ValueOf(splitList(val)))
		} else if msg := setScalar(field, val, envBools); msg != "" {
			problems.add(ev.Name, 0, "%s", msg)
			continue
		}
		origin[ev.Key] = ev.Name
	}
	debugAlias(c, env, origin)
}

// debugAlias honours DEBUG when BLACKSMITH_DEBUG is unset. DEBUG is a name
// many tools share, so a value that is not a boolean is ignored, not an error.
func debugAlias(c *Config, env func(string) (string, bool), origin map[string]string) {
	if _, set := origin["debug"]; set {
		return
	}
	if v, ok := env("BLACKSMITH_DEBUG"); ok && v != "" {
		return // set but invalid: already a problem
	}
	v, ok := env("DEBUG")
	if !ok {
		return
	}
	if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil {
		c.Debug = b
		origin["debug"] = "DEBUG"
	}
}

// splitList splits a colon-separated list, dropping empty parts.
func splitList(s string) []string {
	var out []string
	for part := range strings.SplitSeq(s, ":") {
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}
