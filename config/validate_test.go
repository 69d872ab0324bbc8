package config_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

// cfYAML is a cf section with api and the keys it requires.
func cfYAML(api string) string {
	return "cf:\n  api: " + api + "\n  client_id: blacksmith\n  client_secret: cf-secret\n  broker_name: blacksmith\n"
}

var _ = Describe("validation", func() {
	DescribeTable("names the key of a value out of range",
		func(text string, want ...any) {
			_, err := config.Load(confFile(expand(text)), envOf(requiredEnv()))
			Expect(problems(err)).To(ConsistOf(want))
		},
		Entry("interval zero", "reconciler:\n  interval: 0s\n", "reconciler.interval: must be a positive duration, got 0s"),
		Entry("interval negative", "reconciler:\n  interval: -1m\n", "reconciler.interval: must be a positive duration, got -1m0s"),
		Entry("max_concurrency zero", "reconciler:\n  max_concurrency: 0\n", "reconciler.max_concurrency: must be at least 1, got 0"),
		Entry("batch_size negative", "reconciler:\n  batch_size: -5\n", "reconciler.batch_size: must be at least 1, got -5"),
		Entry("retry_attempts negative", "reconciler:\n  retry_attempts: -1\n", "reconciler.retry_attempts: must be at least 0, got -1"),
		Entry("retry_delay negative", "reconciler:\n  retry_delay: -1s\n", "reconciler.retry_delay: must not be negative, got -1s"),
		Entry("cache_ttl zero", "reconciler:\n  cache_ttl: 0s\n", "reconciler.cache_ttl: must be a positive duration, got 0s"),
		Entry("retention negative", "reconciler:\n  backup:\n    retention: -1\n", "reconciler.backup.retention: must be at least 0, got -1"),
		Entry("backup path empty", "reconciler:\n  backup:\n    path: /\n", "reconciler.backup.path: required (set it in the file or with BLACKSMITH_RECONCILER_BACKUP_PATH)"),
		Entry("orphan grace negative", "reconciler:\n  orphan_grace_period: -1s\n", "reconciler.orphan_grace_period: must not be negative, got -1s"),
		Entry("stop_timeout zero", "reconciler:\n  stop_timeout: 0s\n", "reconciler.stop_timeout: must be a positive duration, got 0s"),
		Entry("webhook url without its secret", "notifications:\n  webhook_url: https://hooks.invalid/x\n",
			"notifications.webhook_secret: required when notifications.webhook_url is set"),
		Entry("webhook with a bad scheme, no secret and an unknown event",
			"notifications:\n  webhooks:\n    - url: ftp://hooks.invalid/x\n      events: [orphaned, exploded]\n",
			"notifications.webhooks[0].url: scheme must be http or https, got \"ftp\"",
			"notifications.webhooks[0].secret: required: every delivery is signed with it",
			"notifications.webhooks[0].events[1]: unknown event \"exploded\" (one of orphaned, unorphaned, drift, quarantined, conflict, run_failed, remediated, unhealthy, recovered, outdated, orphan_deployment, binding_lost)"),
		Entry("webhook url with user info", "notifications:\n  webhooks:\n    - url: https://u:p@hooks.invalid/x\n      secret: s\n",
			"notifications.webhooks[0].url: must not hold user info (use the secret to sign)"),
		Entry("unknown remediation mode", "reconciler:\n  remediation:\n    mode: delete\n", "reconciler.remediation.mode: must be none, redeploy or purge, got \"delete\""),
		Entry("unknown upgrade mode", "reconciler:\n  upgrades:\n    mode: always\n", "reconciler.upgrades.mode: must be report, auto or off, got \"always\""),
		Entry("upgrade window not a window", "reconciler:\n  upgrades:\n    window: nightly\n",
			"reconciler.upgrades.window: must be HH:MM-HH:MM (UTC), got \"nightly\""),
		Entry("upgrade window with an hour past 23", "reconciler:\n  upgrades:\n    window: 22:00-25:00\n",
			"reconciler.upgrades.window: must be HH:MM-HH:MM (UTC), got \"22:00-25:00\": \"25:00\" is not a time HH:MM"),
		Entry("upgrade window that starts when it ends", "reconciler:\n  upgrades:\n    window: 03:00-03:00\n",
			"reconciler.upgrades.window: \"03:00-03:00\" starts when it ends: leave it empty for any time of day"),
		Entry("upgrade rules out of bounds", "reconciler:\n  upgrades:\n    max_in_flight: 0\n    canaries: -1\n    attempt_limit: 0\n    max_failures: -2\n    max_per_run: 0\n    task_timeout: 0s\n",
			"reconciler.upgrades.max_per_run: must be between 1 and 100000, got 0",
			"reconciler.upgrades.canaries: must be between 0 and 1000, got -1",
			"reconciler.upgrades.max_in_flight: must be between 1 and 100, got 0",
			"reconciler.upgrades.max_failures: must be between 0 and 100000, got -2",
			"reconciler.upgrades.attempt_limit: must be between 1 and 100, got 0",
			"reconciler.upgrades.task_timeout: must be a positive duration, got 0s"),
		Entry("ha with a short lease and KV v1", "ha:\n  enabled: true\n  lease_ttl: 1s\nvault:\n  kv_version: 1\n",
			"ha.lease_ttl: must be at least 3s, got 1s", "ha.enabled: needs a KV v2 mount (check-and-set); vault.kv_version is 1"),
		Entry("resync_period zero", "reconciler:\n  resync_period: 0s\n", "reconciler.resync_period: must be a positive duration, got 0s"),
		Entry("health_sweep negative", "reconciler:\n  health_sweep: -1h\n", "reconciler.health_sweep: must not be negative, got -1h0m0s"),
		Entry("health_sweep below the interval", "reconciler:\n  interval: 2h\n  health_sweep: 90m\n",
			"reconciler.health_sweep: must be 0 (off) or at least reconciler.interval (2h0m0s), got 1h30m0s"),
		Entry("breaker_threshold zero", "reconciler:\n  breaker_threshold: 0\n", "reconciler.breaker_threshold: must be between 1 and 1000, got 0"),
		Entry("quarantine max below backoff", "reconciler:\n  quarantine:\n    backoff: 1h\n    max_backoff: 10m\n",
			"reconciler.quarantine.max_backoff: must be at least reconciler.quarantine.backoff (1h0m0s), got 10m0s"),
		Entry("stuck_operation_after zero", "reconciler:\n  stuck_operation_after: 0s\n", "reconciler.stuck_operation_after: must be a positive duration, got 0s"),
		Entry("history keep negative", "reconciler:\n  history:\n    keep: -1\n", "reconciler.history.keep: must be at least 0, got -1"),
		Entry("run_log zero", "reconciler:\n  run_log: 0\n", "reconciler.run_log: must be between 1 and 10000, got 0"),
		Entry("min_confidence above 1", "reconciler:\n  min_confidence: 1.5\n", "reconciler.min_confidence: must be between 0 and 1, got 1.5"),
		Entry("ignore pattern that does not compile", "reconciler:\n  ignore: [\"cf-(\"]\n",
			"reconciler.ignore[0]: invalid regexp: error parsing regexp: missing closing ): `^(?:cf-()$`"),
		Entry("release without service", "reconciler:\n  releases:\n    redis: \"\"\n", "reconciler.releases.redis: service id required"),
		Entry("rule without pattern", "reconciler:\n  rules:\n    - name: r\n", "reconciler.rules[0].pattern: required"),
		Entry("rule that does not compile", "reconciler:\n  rules:\n    - pattern: \"(\"\n",
			"reconciler.rules[0].pattern: invalid regexp: error parsing regexp: missing closing ): `(`"),
		Entry("rule without instance group", "reconciler:\n  rules:\n    - pattern: \"^(?P<plan>.+)$\"\n",
			"reconciler.rules[0].pattern: needs a named group (?P<instance>...)"),
		Entry("rule without plan group or plan_id", "reconciler:\n  rules:\n    - pattern: \"^x-(?P<instance>.+)$\"\n",
			"reconciler.rules[0].pattern: needs a named group (?P<plan>...) unless plan_id is set"),
		Entry("rule with neither group", "reconciler:\n  rules:\n    - pattern: \"^x$\"\n",
			"reconciler.rules[0].pattern: needs a named group (?P<instance>...)",
			"reconciler.rules[0].pattern: needs a named group (?P<plan>...) unless plan_id is set"),
		Entry("listen without port", "broker:\n  listen: 127.0.0.1\n", `broker.listen: not a host:port: "127.0.0.1"`),
		Entry("listen with a bad port", "broker:\n  listen: \"127.0.0.1:http\"\n", `broker.listen: not a host:port: "127.0.0.1:http"`),
		Entry("tls without cert and key", "broker:\n  tls:\n    enabled: true\n",
			"broker.tls.cert: required (set it in the file or with BLACKSMITH_BROKER_TLS_CERT)",
			"broker.tls.key: required (set it in the file or with BLACKSMITH_BROKER_TLS_KEY)"),
		Entry("tls key that is not a key", "broker:\n  tls:\n    enabled: true\n    cert: $CERT\n    key: $CERT\n",
			HavePrefix("broker.tls.cert: loading certificate and key: ")),
		Entry("vault mount empty", "vault:\n  mount: /\n", "vault.mount: required (set it in the file or with BLACKSMITH_VAULT_MOUNT)"),
		Entry("kv version 3", "vault:\n  kv_version: 3\n", "vault.kv_version: must be 1, 2 or 0 (detect), got 3"),
		Entry("vault CA missing", "vault:\n  ca_cert: /nowhere.invalid/ca.pem\n",
			"vault.ca_cert: cannot read: open /nowhere.invalid/ca.pem: no such file or directory"),
		Entry("vault CA not PEM", "vault:\n  ca_cert: $KEY\n", "vault.ca_cert: no PEM certificate found"),
		Entry("bosh CA inline but broken", "bosh:\n  ca_cert: |\n    -----BEGIN CERTIFICATE-----\n    bm90IGEgY2VydA==\n    -----END CERTIFICATE-----\n",
			"bosh.ca_cert: no PEM certificate found"),
		Entry("bosh user without password", "bosh:\n  username: admin\n", "bosh.password: required when bosh.username is set"),
		Entry("bosh secret without client", "bosh:\n  client_secret: s\n", "bosh.client_id: required when bosh.client_secret is set"),
		Entry("bosh timeout zero", "bosh:\n  timeout: 0s\n", "bosh.timeout: must be a positive duration, got 0s"),
		Entry("bosh rate negative", "bosh:\n  rate_limit: -1\n", "bosh.rate_limit: must not be negative, got -1"),
		Entry("bosh burst zero", "bosh:\n  rate_burst: 0\n", "bosh.rate_burst: must be at least 1, got 0"),
		Entry("bosh in flight zero", "bosh:\n  max_in_flight: 0\n", "bosh.max_in_flight: must be at least 1, got 0"),
		Entry("catalog dir missing", "catalog:\n  dirs: [$CATA, /nowhere.invalid]\n", `catalog.dirs[1]: not a directory: "/nowhere.invalid"`),
		Entry("catalog dir a file", "catalog:\n  dirs: [$CERT]\n", MatchRegexp(`^catalog.dirs\[0\]: not a directory: ".*cert.pem"$`)),
		Entry("operator viewer without password", "operator:\n  viewer:\n    username: auditor\n",
			"operator.viewer.password: required when operator.viewer.username is set"),
		Entry("operator viewer named as the broker", "operator:\n  viewer: {username: broker, password: v}\n",
			"operator.viewer.username: must differ from broker.username: each user name has one role"),
		Entry("operator viewer named as the admin", "operator:\n  viewer: {username: operator, password: v}\n",
			"operator.viewer.username: must differ from operator.admin.username: each user name has one role"),
		Entry("metrics user without password", "metrics:\n  username: prometheus\n", "metrics.password: required when metrics.username is set"),
		Entry("unknown orphan_deployments", "reconciler:\n  remediation:\n    orphan_deployments: purge\n",
			`reconciler.remediation.orphan_deployments: must be report or delete, got "purge"`),
		Entry("orphan deployments deleted without cf.api", "reconciler:\n  remediation:\n    orphan_deployments: delete\n",
			"reconciler.remediation.orphan_deployments: needs cf.api: without the platform's view nothing is an orphan deployment"),
		Entry("cf keys without cf.api", "cf:\n  client_id: blacksmith\n  skip_ssl_validation: true\n  check_interval: 5m\n  timeout: 1m\n",
			"cf.client_id: needs cf.api: without it nothing reads the platform",
			"cf.skip_ssl_validation: needs cf.api: without it nothing reads the platform",
			"cf.check_interval: needs cf.api: without it nothing reads the platform",
			"cf.timeout: needs cf.api: without it nothing reads the platform"),
		Entry("cf.api without the client, its secret and the broker name", "cf:\n  api: https://api.sys.invalid\n",
			"cf.client_id: required when cf.api is set (set it in the file or with BLACKSMITH_CF_CLIENT_ID)",
			"cf.client_secret: required when cf.api is set (set it in the file or with BLACKSMITH_CF_CLIENT_SECRET)",
			"cf.broker_name: required when cf.api is set (set it in the file or with BLACKSMITH_CF_BROKER_NAME)"),
		Entry("cf.api a bare host", cfYAML("api.sys.invalid"), `cf.api: scheme must be http or https, got ""`),
		Entry("cf.api of another scheme", cfYAML("ftp://api.sys.invalid"), `cf.api: scheme must be http or https, got "ftp"`),
		Entry("cf.api without a host", cfYAML("https:///v3"), "cf.api: no host"),
		Entry("cf.api with user info", cfYAML("https://admin:s3cret@api.sys.invalid"),
			"cf.api: must not hold user info (cf.client_id and cf.client_secret authenticate)"),
		Entry("cf.api with a path", cfYAML("https://api.sys.invalid/v3"),
			"cf.api: must be the API's root (http(s)://host[:port]), without a path"),
		Entry("cf.api with a query", cfYAML("https://api.sys.invalid?token=x"), "cf.api: must not have a query"),
		Entry("cf.api with a fragment", cfYAML("https://api.sys.invalid#x"), "cf.api: must not have a fragment"),
		Entry("cf.api that does not parse", cfYAML("https://api.sys.invalid:port"), "cf.api: not a URL"),
		Entry("cf check_interval below a minute", cfYAML("https://api.sys.invalid")+"  check_interval: 30s\n",
			"cf.check_interval: must be 0 (every run) or at least 1m, got 30s"),
		Entry("cf check_interval negative", cfYAML("https://api.sys.invalid")+"  check_interval: -1m\n",
			"cf.check_interval: must not be negative, got -1m0s"),
		Entry("cf timeout zero", cfYAML("https://api.sys.invalid")+"  timeout: 0s\n", "cf.timeout: must be a positive duration, got 0s"),
		Entry("cf CA missing", cfYAML("https://api.sys.invalid")+"  ca_cert: /nowhere.invalid/ca.pem\n",
			"cf.ca_cert: cannot read: open /nowhere.invalid/ca.pem: no such file or directory"),
		Entry("cf CA not PEM", cfYAML("https://api.sys.invalid")+"  ca_cert: $KEY\n", "cf.ca_cert: no PEM certificate found"),
		Entry("cf CA inline but broken", cfYAML("https://api.sys.invalid")+"  ca_cert: |\n    -----BEGIN CERTIFICATE-----\n    bm90IGEgY2VydA==\n    -----END CERTIFICATE-----\n",
			"cf.ca_cert: no PEM certificate found"),
	)

	DescribeTable("accepts",
		func(text string, check func(*config.Config)) {
			c, err := config.Load(confFile(expand(text)), envOf(requiredEnv()))
			Expect(err).NotTo(HaveOccurred())
			check(c)
		},
		Entry("a rule with plan_id instead of a plan group", "reconciler:\n  rules:\n    - name: legacy\n      pattern: \"^redis-(?P<instance>.+)$\"\n      plan_id: redis-small\n      service_id: redis\n",
			func(c *config.Config) {
				Expect(c.Reconciler.Rules).To(Equal([]config.Rule{{Name: "legacy", Pattern: "^redis-(?P<instance>.+)$", PlanID: "redis-small", ServiceID: "redis"}}))
			}),
		Entry("releases", "reconciler:\n  releases:\n    redis: redis\n    postgres: postgresql\n",
			func(c *config.Config) {
				Expect(c.Reconciler.Releases).To(Equal(map[string]string{"redis": "redis", "postgres": "postgresql"}))
			}),
		Entry("backups off with no path", "reconciler:\n  backup:\n    enabled: false\n    path: \"\"\n",
			func(c *config.Config) { Expect(c.Reconciler.Backup.Enabled).To(BeFalse()) }),
		Entry("tls with a matching certificate and key", "broker:\n  tls:\n    enabled: true\n    cert: $CERT\n    key: $KEY\n",
			func(c *config.Config) { Expect(c.Broker.TLS.Enabled).To(BeTrue()) }),
		Entry("a listen address on every interface", "broker:\n  listen: \":8080\"\n",
			func(c *config.Config) { Expect(c.Broker.Listen).To(Equal(":8080")) }),
		Entry("a health sweep of one interval (every deployment each run)", "reconciler:\n  interval: 2h\n  health_sweep: 2h\n",
			func(c *config.Config) { Expect(c.Reconciler.HealthSweep).To(Equal(2 * time.Hour)) }),
		Entry("the health sweep off under a long interval", "reconciler:\n  interval: 48h\n  health_sweep: 0s\n",
			func(c *config.Config) { Expect(c.Reconciler.HealthSweep).To(BeZero()) }),
		Entry("the platform read every run, its CA from a file, orphan deployments deleted",
			cfYAML("https://api.sys.invalid/")+"  ca_cert: $CERT\nreconciler:\n  remediation:\n    orphan_deployments: delete\n",
			func(c *config.Config) {
				Expect(c.CF.Enabled()).To(BeTrue())
				Expect(c.CF.CheckInterval).To(BeZero())
				Expect(c.CF.CACertPEM()).To(Equal([]byte(fixtures.caPEM)))
				Expect(c.Reconciler.Remediation.OrphanDeployments).To(Equal(config.OrphanDeploymentsDelete))
			}),
		Entry("the platform read every hour over http", cfYAML("http://127.0.0.2:9022")+"  check_interval: 1h\n",
			func(c *config.Config) { Expect(c.CF.CheckInterval).To(Equal(time.Hour)) }),
		Entry("a cf section left at its defaults without cf.api", "cf:\n  api: \"\"\n  client_id: \"\"\n  timeout: 30s\n  check_interval: 0s\n",
			func(c *config.Config) { Expect(c.CF.Enabled()).To(BeFalse()) }),
	)

	DescribeTable("takes a BOSH address as the bosh CLI does",
		func(given, want string) {
			c, err := config.Load("", envOf(with(requiredEnv(), map[string]string{"BOSH_ENVIRONMENT": given})))
			Expect(err).NotTo(HaveOccurred())
			Expect(c.BOSH.Address).To(Equal(want))
		},
		Entry("bare IP", "127.0.0.2", "https://127.0.0.2:25555"),
		Entry("host and port", "director.invalid:25556", "https://director.invalid:25556"),
		Entry("bare IPv6", "::1", "https://[::1]:25555"),
		Entry("bracketed IPv6", "[::1]", "https://[::1]:25555"),
		Entry("URL kept as given", "http://127.0.0.1:8080", "http://127.0.0.1:8080"),
	)

	It("names the key of an address that is not a URL", func() {
		path := confFile("vault:\n  address: 127.0.0.1:8200\nbosh:\n  address: ftp://director.invalid\n")
		_, err := config.Load(path, envOf(map[string]string{"BLACKSMITH_BROKER_USERNAME": "u", "BLACKSMITH_BROKER_PASSWORD": "p",
			"BLACKSMITH_OPERATOR_ADMIN_USERNAME": "o", "BLACKSMITH_OPERATOR_ADMIN_PASSWORD": "op"}))
		Expect(problems(err)).To(ConsistOf(
			`vault.address: not an http(s) URL: "127.0.0.1:8200"`,
			`bosh.address: not an http(s) URL or host[:port]: "ftp://director.invalid"`))
	})

	It("names the variable behind a cf key set without cf.api", func() {
		_, err := config.Load("", envOf(with(requiredEnv(), map[string]string{"BLACKSMITH_CF_CLIENT_SECRET": "cf-s3cret"})))
		Expect(problems(err)).To(ConsistOf(
			"cf.client_secret: needs cf.api: without it nothing reads the platform (set by BLACKSMITH_CF_CLIENT_SECRET)"))
	})

	It("names the variable behind a value that fails validation", func() {
		_, err := config.Load("", envOf(with(requiredEnv(), map[string]string{"BLACKSMITH_RECONCILER_MAX_CONCURRENCY": "-2"})))
		Expect(problems(err)).To(ConsistOf(
			"reconciler.max_concurrency: must be at least 1, got -2 (set by BLACKSMITH_RECONCILER_MAX_CONCURRENCY)"))
	})
})

var _ = Describe("an upgrade window", func() {
	at := func(hhmm string) time.Time {
		t, err := time.Parse("15:04", hhmm)
		Expect(err).NotTo(HaveOccurred())
		return time.Date(2026, 11, 26, t.Hour(), t.Minute(), 0, 0, time.UTC)
	}
	DescribeTable("contains the times between its start (included) and its end (excluded), in UTC",
		func(window, now string, inside bool) {
			w, err := config.ParseWindow(window)
			Expect(err).NotTo(HaveOccurred())
			Expect(w.Contains(at(now))).To(Equal(inside))
			Expect(w.String()).To(Equal(window))
		},
		Entry("any time", "", "13:37", true),
		Entry("its start", "02:00-04:00", "02:00", true),
		Entry("inside", "02:00-04:00", "03:59", true),
		Entry("its end", "02:00-04:00", "04:00", false),
		Entry("before", "02:00-04:00", "01:59", false),
		Entry("past midnight, late", "22:00-04:00", "23:30", true),
		Entry("past midnight, early", "22:00-04:00", "00:10", true),
		Entry("past midnight, outside", "22:00-04:00", "12:00", false),
	)
	It("reads a time in another zone as UTC", func() {
		w, err := config.ParseWindow("02:00-04:00")
		Expect(err).NotTo(HaveOccurred())
		paris := time.FixedZone("CET", 3600)
		Expect(w.Contains(time.Date(2026, 11, 26, 4, 30, 0, 0, paris))).To(BeTrue()) // 03:30 UTC
	})
})
