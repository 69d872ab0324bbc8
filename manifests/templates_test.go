package manifests_test

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"
)

// requiredProps sets the job's four required properties, and nothing else.
func requiredProps() map[string]any {
	return map[string]any{
		"broker":   map[string]any{"username": "broker", "password": "broker-secret"},
		"operator": map[string]any{"admin": map[string]any{"username": "operator", "password": "operator-secret"}},
		"vault":    map[string]any{"address": "https://vault.example.com:8200"},
		"bosh":     map[string]any{"address": "https://director.example.com:25555"},
	}
}

// renderedBPM renders the job from props and returns the one process of
// its bpm.yml, which must pass checkBPM; the error is the rendering's.
func renderedBPM(props map[string]any) (bpmProcess, error) {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	if err := renderJob(props, dir); err != nil {
		return bpmProcess{}, err
	}
	return bpmProcessAt(filepath.Join(dir, "config/bpm.yml")), nil
}

// bpmProcessAt reads a rendered bpm.yml, checks it, and returns its one
// process.
func bpmProcessAt(path string) bpmProcess {
	GinkgoHelper()
	text, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	Expect(checkBPM(text, "blacksmith")).To(Succeed())
	var bpm bpmConfig
	Expect(yaml.Unmarshal(text, &bpm)).To(Succeed())
	Expect(bpm.Processes).To(HaveLen(1))
	return bpm.Processes[0]
}

// otherProps sets every property of the job to a value that is not its
// default (a password holding YAML and shell syntax; PEM from tls).
func otherProps(tls *certificate) map[string]any {
	rule := map[string]any{"name": "legacy", "pattern": `^legacy-(?P<plan>[a-z-]+)-(?P<instance>[0-9a-f-]+)$`,
		"service_id": "redis", "plan_id": ""}
	return map[string]any{
		"debug":        true,
		"memory_limit": "450MiB",
		"broker": map[string]any{"listen": "0.0.0.0:3001", "username": "platform", "password": `p"a: #s's\w$rd`,
			"tls":            map[string]any{"enabled": true, "cert": tls.cert, "key": tls.key},
			"max_body_bytes": 300000, "max_parameters_bytes": 20000, "max_parameters_depth": 12, "max_id_length": 40,
			"read_timeout": "31s", "write_timeout": "90s", "idle_timeout": "3m"},
		"vault": map[string]any{"address": "https://vault.test:8200", "token": "s.token", "mount": "kv",
			"ca_cert": tls.ca, "skip_ssl_validation": true, "kv_version": 2, "max_record_bytes": 65536},
		"bosh": map[string]any{"address": "https://director.test:25555", "username": "admin", "password": "admin-pw",
			"client_id": "blacksmith", "client_secret": "client-pw", "ca_cert": tls.ca, "skip_ssl_validation": true,
			"timeout": "45s", "name": "east", "rate_limit": 2.5, "rate_burst": 20, "max_in_flight": 4,
			"more_directors": []any{map[string]any{"name": "west", "address": "https://director-west.test:25555",
				"client_id": "blacksmith", "client_secret": "west-pw", "ca_cert": tls.ca, "rate_limit": 5.0}}},
		"catalog": map[string]any{"dirs": []any{"/var/vcap/jobs/forge-a/catalog", "/var/vcap/jobs/forge-b/catalog"}},
		"operator": map[string]any{"admin": map[string]any{"username": "ops", "password": `o"p: #s's\w$rd`},
			"viewer": map[string]any{"username": "auditor", "password": "view-pw"}},
		"metrics": map[string]any{"enabled": false, "username": "prometheus", "password": "prom-pw"},
		"ha":      map[string]any{"enabled": true, "lease_ttl": "45s", "id": "vm-a"},
		"cf": map[string]any{"api": "https://api.sys.test", "client_id": "blacksmith-reconciler", "client_secret": "cf-pw",
			"ca_cert": tls.ca, "skip_ssl_validation": true, "broker_name": "blacksmith", "check_interval": "10m", "timeout": "45s"},
		"notifications": map[string]any{"webhook_url": "https://hooks.invalid/all", "webhook_secret": "hook-pw",
			"webhooks": []any{map[string]any{"url": "https://hooks.invalid/x", "events": []any{"orphaned"}, "secret": "hook2-pw"}}},
		"reconciler": map[string]any{"enabled": false, "interval": "2h", "watch_interval": "45s", "max_concurrency": 7, "batch_size": 20,
			"retry_attempts": 5, "retry_delay": "3s", "cache_ttl": "7m", "resync_period": "12h",
			"backup":              map[string]any{"enabled": false, "retention": 3, "cleanup": false, "path": "snapshots"},
			"orphan_grace_period": "20m", "stop_timeout": "12s", "breaker_threshold": 4,
			"quarantine":            map[string]any{"backoff": "2m", "max_backoff": "2h"},
			"stuck_operation_after": "40m", "history": map[string]any{"keep": 30, "max_age": "720h"},
			"run_log": 20, "min_confidence": 0.5, "health_sweep": "36h", "health": map[string]any{"tasks_at_once": 2},
			"remediation": map[string]any{"mode": "purge", "min_age": "48h", "max_per_run": 2, "orphan_deployments": "delete",
				"orphan_deployments_max_share": 0.25, "retirement_period": "72h"},
			"upgrades": map[string]any{"mode": "auto", "max_per_run": 3, "window": "02:00-04:00", "canaries": 2,
				"max_in_flight": 7, "max_failures": 0, "attempt_limit": 9, "task_timeout": "90m"},
			"releases": map[string]any{"redis": "redis"}, "rules": []any{rule}, "ignore": []any{"cf", "concourse-.*"}},
	}
}

// renderedKeys lists the dotted keys of a rendered blacksmith.conf, taking
// the matcher's releases and rules as single keys.
func renderedKeys(path string) []string {
	GinkgoHelper()
	var tree map[string]any
	readYAML(path, &tree)
	var keys []string
	var walk func(node map[string]any, prefix string)
	walk = func(node map[string]any, prefix string) {
		for k, v := range node {
			if sub, ok := v.(map[string]any); ok && !slices.Contains(fileOnlyKeys, prefix+k) {
				walk(sub, prefix+k+".")
				continue
			}
			keys = append(keys, prefix+k)
		}
	}
	walk(tree, "")
	slices.Sort(keys)
	return keys
}

var _ = Describe("the blacksmith job's templates", func() {
	var spec jobSpec

	BeforeEach(func() {
		rubyPath()
		spec = loadJobSpec()
	})

	DescribeTable("do not render without a required property",
		func(section, key string) {
			props := requiredProps()
			delete(props[section].(map[string]any), key)
			err := renderJob(props, GinkgoT().TempDir())
			Expect(err).To(MatchError(ContainSubstring(`Can't find property '["%s.%s"]'`, section, key)))
		},
		Entry("broker.username", "broker", "username"),
		Entry("broker.password", "broker", "password"),
		Entry("vault.address", "vault", "address"),
		Entry("bosh.address", "bosh", "address"),
	)

	It("do not render without the operator's admin credentials", func() {
		for _, key := range []string{"username", "password"} {
			props := requiredProps()
			delete(props["operator"].(map[string]any)["admin"].(map[string]any), key)
			err := renderJob(props, GinkgoT().TempDir())
			Expect(err).To(MatchError(ContainSubstring(`Can't find property '["operator.admin.%s"]'`, key)))
		}
	})

	It("render from the spec defaults a blacksmith.conf with every property, which check-config accepts", func() {
		props := requiredProps()
		vm := newFakeVM(props)
		Expect(renderedKeys(vm.jobFile("config/blacksmith.conf"))).To(Equal(configProperties(spec)))
		vm.expectCarried(spec, props, vm.deploy())
	})

	It("carry every property, each set to a value other than its default, into the daemon's configuration", func() {
		props := otherProps(newCertificate(nil, "blacksmith.test", true, "blacksmith.test"))
		for key, prop := range spec.Properties {
			value, ok := lookup(props, key)
			Expect(ok).To(BeTrue(), "the spec sets no value for %s", key)
			Expect(sameValue(value, prop["default"])).To(BeFalse(), "the value for %s is its default", key)
		}
		vm := newFakeVM(props)
		vm.expectCarried(spec, props, vm.deploy())
	})

	It("give the daemon GOMEMLIMIT from memory_limit, refuse one the Go runtime cannot read, and set none by default", func() {
		plain, err := renderedBPM(requiredProps())
		Expect(err).NotTo(HaveOccurred())
		Expect(plain.Env).To(BeEmpty())

		props := requiredProps()
		props["memory_limit"] = "450MiB"
		limited, err := renderedBPM(props)
		Expect(err).NotTo(HaveOccurred())
		Expect(limited.Env).To(Equal(map[string]string{"GOMEMLIMIT": "450MiB"}))

		for _, bad := range []any{"lots", "450 MiB", "450MB", "-1", "0", "450MiB\nGOGC: off"} {
			props["memory_limit"] = bad
			_, err := renderedBPM(props)
			Expect(err).To(MatchError(ContainSubstring("memory_limit")), "%q", bad)
		}
	})

	It("write a bpm.yml bpm accepts, that runs the package's binary on the rendered blacksmith.conf", func() {
		process, err := renderedBPM(requiredProps())
		Expect(err).NotTo(HaveOccurred())
		Expect(process.Executable).To(Equal("/var/vcap/packages/blacksmith/bin/blacksmith"))
		Expect(spec.Packages).To(ContainElement("blacksmith"))
		Expect(process.Args).To(Equal([]string{"serve", "-c", "/var/vcap/jobs/blacksmith/config/blacksmith.conf"}))
		Expect(slices.Collect(maps.Values(spec.Templates))).To(ContainElement("config/blacksmith.conf"))
	})

	It("have a monit file that starts and stops bpm's process, with bpm's pid file", func() {
		monit, err := os.ReadFile(filepath.Join(jobDir, "monit"))
		Expect(err).NotTo(HaveOccurred())
		text := strings.Join(strings.Fields(string(monit)), " ")
		Expect(text).To(MatchRegexp(`^check process blacksmith with pidfile /var/vcap/sys/run/bpm/blacksmith/blacksmith\.pid `))
		Expect(text).To(ContainSubstring(`start program "/var/vcap/jobs/bpm/bin/bpm start blacksmith"`))
		Expect(text).To(ContainSubstring(`stop program "/var/vcap/jobs/bpm/bin/bpm stop blacksmith"`))
		Expect(regexp.MustCompile(`check process`).FindAllString(text, -1)).To(HaveLen(1))
	})
})
