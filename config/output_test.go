package config_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

// fullYAML sets every secret and a value for every kind of key.
const fullYAML = `
debug: true
broker:
  listen: 127.0.0.1:3001
  username: admin
  password: broker-s3cret
operator:
  admin: {username: operator, password: operator-s3cret}
  viewer: {username: auditor, password: viewer-s3cret}
vault:
  address: http://127.0.0.1:8200
  token: vault-s3cret
  mount: kv
  kv_version: 2
bosh:
  address: 127.0.0.2
  username: admin
  password: bosh-s3cret
  client_id: blacksmith
  client_secret: uaa-s3cret
  ca_cert: $CERT
  rate_limit: 2.5
catalog:
  dirs: [$CATA, $CATB]
metrics:
  username: prometheus
  password: metrics-s3cret
reconciler:
  enabled: false
  interval: 90m
  retry_delay: 1m30s
  backup:
    cleanup: false
    retention: 0
  releases:
    redis: redis
    postgres: postgresql
  rules:
    - name: forge
      pattern: '^(?P<plan>[a-z0-9-]+)-(?P<instance>[0-9a-f-]{36})$'
      service_id: redis
notifications:
  webhook_url: https://hooks.invalid/all?token=hook-url-t0ken&channel=ops
  webhook_secret: hook-s3cret
  webhooks:
    - url: http://127.0.0.2:9000/events?sig=hook2-url-t0ken
      events: [orphaned, run_failed]
      secret: hook2-s3cret
cf:
  api: https://api.sys.invalid
  client_id: blacksmith-reconciler
  client_secret: cf-s3cret
  broker_name: blacksmith
  check_interval: 10m
`

var secrets = []string{"broker-s3cret", "vault-s3cret", "bosh-s3cret", "uaa-s3cret", "metrics-s3cret", "hook-s3cret", "hook2-s3cret",
	"operator-s3cret", "viewer-s3cret",
	"cf-s3cret", "hook-url-t0ken", "hook2-url-t0ken"}

var _ = Describe("output", func() {
	var c *config.Config

	BeforeEach(func() {
		var err error
		c, err = config.Load(confFile(expand(fullYAML)), nil)
		Expect(err).NotTo(HaveOccurred())
	})

	Describe("Redacted", func() {
		It("replaces every secret that is set and keeps the rest", func() {
			r := c.Redacted()
			Expect([]string{r.Broker.Password, r.Vault.Token, r.BOSH.Password, r.BOSH.ClientSecret, r.CF.ClientSecret, r.Metrics.Password,
				r.Notifications.WebhookSecret, r.Notifications.Webhooks[0].Secret}).To(HaveEach(config.RedactedValue))
			Expect(c.Notifications.Webhooks[0].Secret).To(Equal("hook2-s3cret"), "the original keeps its secret")
			Expect(r.Notifications.Webhooks[0].Events).To(Equal([]string{"orphaned", "run_failed"}))
			Expect(r.Broker.Username).To(Equal("admin"))
			Expect(r.BOSH.ClientID).To(Equal("blacksmith"))
			Expect(r.CF.ClientID).To(Equal("blacksmith-reconciler"))
			Expect(r.CF.API).To(Equal("https://api.sys.invalid"))
			Expect(c.CF.ClientSecret).To(Equal("cf-s3cret"), "the original keeps its secret")
			Expect(r.Reconciler).To(Equal(c.Reconciler))
		})

		It("redacts the user info, the query's values and the fragment of every URL, and keeps the rest", func() {
			r := c.Redacted()
			Expect(r.Notifications.WebhookURL).To(Equal("https://hooks.invalid/all?token=" + config.RedactedValue + "&channel=" + config.RedactedValue))
			Expect(r.Notifications.Webhooks[0].URL).To(Equal("http://127.0.0.2:9000/events?sig=" + config.RedactedValue))
			Expect(r.Vault.Address).To(Equal("http://127.0.0.1:8200"))
			Expect(c.Notifications.WebhookURL).To(ContainSubstring("hook-url-t0ken"), "the original keeps its URL")
		})

		DescribeTable("redacts what a URL may hide",
			func(address, want string) {
				c.Vault.Address = address
				Expect(c.Redacted().Vault.Address).To(Equal(want))
			},
			Entry("user info", "https://user:pw@vault.invalid:8200/v1", "https://"+config.RedactedValue+"@vault.invalid:8200/v1"),
			Entry("a bare token", "https://vault.invalid?s3cret", "https://vault.invalid?"+config.RedactedValue),
			Entry("an empty value", "https://vault.invalid/?a=&b=2", "https://vault.invalid/?a="+config.RedactedValue+"&b="+config.RedactedValue),
			Entry("a fragment", "https://vault.invalid/#s3cret", "https://vault.invalid/#"+config.RedactedValue),
			Entry("what does not parse, holding user info", "user:pw@vault.invalid:8200", config.RedactedValue),
			Entry("what does not parse, holding nothing", "127.0.0.2:8200", "127.0.0.2:8200"),
			Entry("a plain URL", "https://vault.invalid:8200", "https://vault.invalid:8200"),
		)

		It("leaves unset secrets empty, so an operator sees they are unset", func() {
			c.Vault.Token = ""
			Expect(c.Redacted().Vault.Token).To(BeEmpty())
		})

		It("leaves the original alone", func() {
			r := c.Redacted()
			r.Catalog.Dirs[0] = "/elsewhere"
			r.Reconciler.Releases["redis"] = "other"
			Expect(c.Broker.Password).To(Equal("broker-s3cret"))
			Expect(c.Catalog.Dirs[0]).To(Equal(fixtures.catalogA))
			Expect(c.Reconciler.Releases["redis"]).To(Equal("redis"))
		})
	})

	Describe("YAML", func() {
		It("reads back to the same configuration", func() {
			out, err := c.YAML()
			Expect(err).NotTo(HaveOccurred())
			again, err := config.Load(confFile(string(out)), nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(again).To(Equal(c))
		})

		It("writes durations as Go durations", func() {
			out, err := c.YAML()
			Expect(err).NotTo(HaveOccurred())
			Expect(string(out)).To(ContainSubstring("  interval: 1h30m\n"))
			Expect(string(out)).To(ContainSubstring("  retry_delay: 1m30s\n"))
			Expect(string(out)).To(ContainSubstring("  cache_ttl: 5m\n"))
		})

		It("of the redacted copy holds no secret", func() {
			out, err := c.Redacted().YAML()
			Expect(err).NotTo(HaveOccurred())
			for _, s := range secrets {
				Expect(string(out)).NotTo(ContainSubstring(s))
			}
			Expect(strings.Count(string(out), config.RedactedValue)).To(Equal(len(secrets)+1), "the secrets and the webhook URL's channel")
		})
	})
})

var _ = Describe("CheckConfig", func() {
	check := func(path string, env map[string]string) (code int, stdout, stderr string) {
		var out, errOut bytes.Buffer
		code = config.CheckConfig(path, envOf(env), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	It("prints the effective configuration, secrets redacted, and exits 0", func() {
		path := confFile(expand(fullYAML))
		code, stdout, stderr := check(path, map[string]string{"BLACKSMITH_RECONCILER_BATCH_SIZE": "42"})
		Expect(code).To(Equal(0))
		Expect(stderr).To(BeEmpty())
		Expect(stdout).To(ContainSubstring("  batch_size: 42\n"))
		Expect(stdout).To(ContainSubstring("  address: https://127.0.0.2:25555\n"))
		for _, s := range secrets {
			Expect(stdout).NotTo(ContainSubstring(s))
		}
		Expect(stdout).To(ContainSubstring("  password: " + config.RedactedValue + "\n"))
	})

	It("prints defaults for what the file leaves out", func() {
		code, stdout, _ := check(confFile(requiredYAML), nil)
		Expect(code).To(Equal(0))
		Expect(stdout).To(ContainSubstring("reconciler:\n  enabled: true\n  interval: 1h\n  watch_interval: 1m\n  max_concurrency: 5\n"))
	})

	It("prints every problem, with its file line, and exits non-zero", func() {
		path := confFile("broker:\n  username: admin\n  bogus: 1\nreconciler:\n  interval: abc\n")
		code, stdout, stderr := check(path, map[string]string{"BLACKSMITH_RECONCILER_MAX_CONCURRENCY": "x"})
		Expect(code).NotTo(Equal(0))
		Expect(stdout).To(BeEmpty())
		Expect(strings.Split(strings.TrimSpace(stderr), "\n")).To(Equal([]string{
			"check-config: 8 problem(s) in the configuration:",
			"  broker.bogus: unknown key (" + path + " line 3)",
			`  reconciler.interval: invalid duration "abc" (` + path + " line 5)",
			`  BLACKSMITH_RECONCILER_MAX_CONCURRENCY: not an integer: "x"`,
			"  broker.password: required (set it in the file or with BLACKSMITH_BROKER_PASSWORD)",
			"  operator.admin.username: required (set it in the file or with BLACKSMITH_OPERATOR_ADMIN_USERNAME)",
			"  operator.admin.password: required (set it in the file or with BLACKSMITH_OPERATOR_ADMIN_PASSWORD)",
			"  vault.address: required (set it in the file or with VAULT_ADDR)",
			"  bosh.address: required (set it in the file or with BOSH_ENVIRONMENT)",
		}))
	})

	It("names a missing file and exits non-zero", func() {
		path := filepath.Join(GinkgoT().TempDir(), "blacksmith.conf")
		code, stdout, stderr := check(path, requiredEnv())
		Expect(code).NotTo(Equal(0))
		Expect(stdout).To(BeEmpty())
		Expect(stderr).To(ContainSubstring(path + ": cannot read: no such file or directory"))
	})
})

var _ = Describe("BOSHConfig.CACertPEM", func() {
	It("reads the file bosh.ca_cert names", func() {
		pem, err := config.BOSHConfig{CACert: fixtures.cert}.CACertPEM()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(pem)).To(Equal(fixtures.caPEM))
	})

	It("returns PEM given inline, as BOSH_CA_CERT allows", func() {
		pem, err := config.BOSHConfig{CACert: fixtures.caPEM}.CACertPEM()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(pem)).To(Equal(fixtures.caPEM))
	})

	It("returns nothing when unset", func() {
		Expect(config.BOSHConfig{}.CACertPEM()).To(BeNil())
	})

	It("names the file it cannot read", func() {
		_, err := config.BOSHConfig{CACert: "/nowhere.invalid/ca.pem"}.CACertPEM()
		Expect(err).To(MatchError(os.ErrNotExist))
		Expect(err.Error()).To(ContainSubstring("/nowhere.invalid/ca.pem"))
	})
})

var _ = Describe("CFConfig.CACertPEM", func() {
	It("reads the file cf.ca_cert names", func() {
		pem, err := config.CFConfig{CACert: fixtures.cert}.CACertPEM()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(pem)).To(Equal(fixtures.caPEM))
	})

	It("returns PEM given inline", func() {
		pem, err := config.CFConfig{CACert: fixtures.caPEM}.CACertPEM()
		Expect(err).NotTo(HaveOccurred())
		Expect(string(pem)).To(Equal(fixtures.caPEM))
	})

	It("returns nothing when unset", func() {
		Expect(config.CFConfig{}.CACertPEM()).To(BeNil())
	})

	It("names the file it cannot read", func() {
		_, err := config.CFConfig{CACert: "/nowhere.invalid/ca.pem"}.CACertPEM()
		Expect(err).To(MatchError(os.ErrNotExist))
		Expect(err.Error()).To(And(ContainSubstring("/nowhere.invalid/ca.pem"), HavePrefix("reading cf CA certificate: ")))
	})
})
