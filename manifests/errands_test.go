package manifests_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	ccsim "github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// errandVM renders the blacksmith job (its configuration reaching only
// loopback and .invalid names, no Vault token: the errands stop at the
// first thing they need) and the errand job named errand with props onto a
// fake VM, the daemon's binary at its package's path, and runs the errand's
// bin/run as BOSH does.
func errandVM(errand string, props map[string]any) *gexec.Session {
	GinkgoHelper()
	daemon := requiredProps()
	daemon["vault"] = map[string]any{"address": "https://127.0.0.2:1"}
	daemon["bosh"] = map[string]any{"address": "https://director.invalid:25555"}
	vm := newFakeVM(daemon)
	job := vm.path("/var/vcap/jobs/" + errand)
	Expect(renderJobAt(filepath.Join(releaseDir, "jobs", errand), props, job)).To(Succeed())
	run, err := os.ReadFile(filepath.Join(job, "bin/run"))
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(job, "bin/run"), []byte(strings.ReplaceAll(string(run), "/var/vcap/", vm.root+"/var/vcap/")), 0o755)).To(Succeed())
	bin := vm.path("/var/vcap/packages/blacksmith/bin/blacksmith")
	Expect(os.MkdirAll(filepath.Dir(bin), 0o755)).To(Succeed())
	Expect(os.Symlink(blacksmithBin, bin)).To(Succeed())
	cmd := exec.Command("bash", filepath.Join(job, "bin/run"))
	cmd.Env = cleanEnv()
	session, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(session).WithTimeout(30 * time.Second).Should(gexec.Exit())
	return session
}

var _ = Describe("the errand jobs", func() {
	BeforeEach(func() { rubyPath() })

	It("run orphan-deployments with the blacksmith job's configuration, its exit code theirs", func() {
		session := errandVM("orphan-deployments", map[string]any{"json": true})
		Expect(session.ExitCode()).To(Equal(1))
		Expect(string(session.Err.Contents())).To(ContainSubstring("no platform configured: set cf.api"))
	})

	It("run upgrade-all with the job's fleet rules as flags the daemon accepts", func() {
		session := errandVM("upgrade-all-service-instances", map[string]any{"dry_run": true, "canaries": 2, "max_in_flight": 3,
			"plan": "redis-small", "allow": []any{"network", "az"}, "json": true})
		Expect(session.ExitCode()).To(Equal(1), "past the flags, to the configuration's missing Vault token")
		Expect(string(session.Err.Contents())).To(ContainSubstring("vault options: token"))
		Expect(string(session.Err.Contents())).NotTo(ContainSubstring("flag provided but not defined"))
	})

	It("say they need the blacksmith job when it is not on the VM", func() {
		dir := GinkgoT().TempDir()
		Expect(renderJobAt(filepath.Join(releaseDir, "jobs", "orphan-deployments"), map[string]any{}, dir)).To(Succeed())
		run, err := os.ReadFile(filepath.Join(dir, "bin/run"))
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "bin/run"), []byte(strings.ReplaceAll(string(run), "/var/vcap/", dir+"/var/vcap/")), 0o755)).To(Succeed())
		cmd := exec.Command("bash", filepath.Join(dir, "bin/run"))
		cmd.Env = cleanEnv()
		out, err := cmd.CombinedOutput()
		Expect(err).To(HaveOccurred())
		Expect(string(out)).To(ContainSubstring("colocate the errand with the blacksmith job"))
	})

	DescribeTable("refuse, when rendered, a property that is not what the flag takes (nothing reaches the shell as text)",
		func(props map[string]any, says string) {
			err := renderJobAt(filepath.Join(releaseDir, "jobs", "upgrade-all-service-instances"), props, GinkgoT().TempDir())
			Expect(err).To(MatchError(ContainSubstring(says)))
		},
		Entry("a plan with shell in it", map[string]any{"plan": "p; rm -rf /"}, `plan "p; rm -rf /": want an id`),
		Entry("a service with a newline", map[string]any{"service": "s\nexit 0"}, "service"),
		Entry("negative canaries", map[string]any{"canaries": -1}, "canaries -1"),
		Entry("canaries as words", map[string]any{"canaries": "two"}, `canaries "two": want a whole number`),
		Entry("too many in flight", map[string]any{"max_in_flight": 1000000}, "max_in_flight 1000000"),
		Entry("an unknown class", map[string]any{"allow": []any{"network", "everything"}}, `allow "everything": not a class`),
	)

	It("pass ids as single words, escaped", func() {
		dir := GinkgoT().TempDir()
		Expect(renderJobAt(filepath.Join(releaseDir, "jobs", "upgrade-all-service-instances"),
			map[string]any{"service": "redis:v2", "plan": "redis-small.2", "director": "east_1"}, dir)).To(Succeed())
		run, err := os.ReadFile(filepath.Join(dir, "bin/run"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(run)).To(ContainSubstring(`blacksmith upgrade-all --service redis:v2 --plan redis-small.2 --director east_1 -c "$conf"`))
	})

	Context("the errands that write to Cloud Foundry, through bin/run against the Cloud Controller simulator", func() {
		var cc *ccsim.CC
		cfProps := func(extra map[string]any) map[string]any {
			props := map[string]any{"cf": map[string]any{"api_url": cc.URL(), "client_id": ccsim.DefaultClientID,
				"client_secret": ccsim.DefaultClientSecret}, "broker_name": "blacksmith"}
			for k, v := range extra {
				props[k] = v
			}
			return props
		}
		BeforeEach(func() {
			var err error
			cc, err = ccsim.New(ccsim.Options{})
			Expect(err).NotTo(HaveOccurred())
			DeferCleanup(cc.Close)
		})

		It("run register-broker with the job's own client: the Cloud Controller takes it, and its job fails fetching the catalog of a broker that is not there", func() {
			session := errandVM("register-broker", cfProps(map[string]any{"broker_url": "http://127.0.0.1:1", "default_access": "none"}))
			Expect(session.ExitCode()).To(Equal(1), string(session.Err.Contents()))
			Expect(string(session.Err.Contents())).To(And(ContainSubstring(`creating service broker "blacksmith"`),
				ContainSubstring("service_broker.catalog.synchronize) failed")))
			Expect(string(session.Err.Contents())).NotTo(ContainSubstring(ccsim.DefaultClientSecret))
		})

		It("run deregister-broker: nothing registered, nothing to do", func() {
			session := errandVM("deregister-broker", cfProps(nil))
			Expect(session.ExitCode()).To(Equal(0), string(session.Err.Contents()))
			Expect(string(session.Out.Contents())).To(ContainSubstring(`service broker "blacksmith" is not registered: nothing to do`))
		})

		It("run delete-all-service-instances only with i_understand_this_deletes_everything: true", func() {
			session := errandVM("delete-all-service-instances", cfProps(nil))
			Expect(session.ExitCode()).To(Equal(2))
			Expect(string(session.Err.Contents())).To(ContainSubstring("i_understand_this_deletes_everything: true"))
			session = errandVM("delete-all-service-instances", cfProps(map[string]any{"i_understand_this_deletes_everything": true, "max_in_flight": 3}))
			Expect(session.ExitCode()).To(Equal(0), string(session.Err.Contents()))
			Expect(string(session.Out.Contents())).To(ContainSubstring(`0 instance(s) of broker "blacksmith" to delete`))
		})
	})

	It("run recreate-all with the job's fleet rules as flags the daemon accepts", func() {
		session := errandVM("recreate-all-service-instances", map[string]any{"dry_run": true, "canaries": 2, "max_in_flight": 3,
			"max_failures": 0, "plan": "redis-small", "json": true})
		Expect(session.ExitCode()).To(Equal(1), "past the flags, to the configuration's missing Vault token")
		Expect(string(session.Err.Contents())).To(ContainSubstring("vault options: token"))
		Expect(string(session.Err.Contents())).NotTo(ContainSubstring("flag provided but not defined"))
	})

	creds := map[string]any{"client_id": "c", "client_secret": "s"}
	DescribeTable("refuse, when rendered, a property of the new errands that is not what its flag takes",
		func(job string, props map[string]any, says string) {
			err := renderJobAt(filepath.Join(releaseDir, "jobs", job), props, GinkgoT().TempDir())
			Expect(err).To(MatchError(ContainSubstring(says)))
		},
		Entry("register-broker without its client", "register-broker", map[string]any{"broker_url": "https://b.example.com"},
			"cf.client_id and cf.client_secret are required"),
		Entry("register-broker without a broker URL", "register-broker", map[string]any{"cf": creds}, `broker_url ""`),
		Entry("a broker URL with shell in it", "register-broker", map[string]any{"cf": creds, "broker_url": "https://b;reboot"}, "broker_url"),
		Entry("a plan id with a space", "register-broker", map[string]any{"cf": creds, "broker_url": "https://b.example.com",
			"service_access": map[string]any{"redis small": "all"}}, `service_access plan "redis small"`),
		Entry("an access that is neither all, none nor orgs", "register-broker", map[string]any{"cf": creds, "broker_url": "https://b.example.com",
			"service_access": map[string]any{"redis-small": "some"}}, `want all, none or a list of organization names`),
		Entry("an org with a comma", "register-broker", map[string]any{"cf": creds, "broker_url": "https://b.example.com",
			"service_access": map[string]any{"redis-small": []any{"a,b"}}}, `organization "a,b"`),
		Entry("an empty list of orgs", "register-broker", map[string]any{"cf": creds, "broker_url": "https://b.example.com",
			"service_access": map[string]any{"redis-small": []any{}}}, "an empty list of organizations"),
		Entry("an unknown default access", "register-broker", map[string]any{"cf": creds, "broker_url": "https://b.example.com",
			"default_access": "everyone"}, `default_access "everyone"`),
		Entry("a cf.api_url with a path", "deregister-broker", map[string]any{"cf": map[string]any{"client_id": "c", "client_secret": "s",
			"api_url": "https://api.example.com/x"}}, "cf.api_url"),
		Entry("a secret with a newline", "deregister-broker", map[string]any{"cf": map[string]any{"client_id": "c", "client_secret": "s\nexit 0"}},
			"no line breaks"),
		Entry("a broker name with shell in it", "delete-all-service-instances", map[string]any{"cf": creds, "broker_name": "b$(x)"}, "broker_name"),
		Entry("max_in_flight 0", "delete-all-service-instances", map[string]any{"cf": creds, "max_in_flight": 0}, "max_in_flight 0"),
		Entry("recreate canaries as words", "recreate-all-service-instances", map[string]any{"canaries": "two"}, `canaries "two"`),
		Entry("recreate a plan with shell in it", "recreate-all-service-instances", map[string]any{"plan": "p; rm -rf /"}, `plan "p; rm -rf /"`),
	)

	It("pass register-broker's service access as single escaped words, and the client only in the environment", func() {
		dir := GinkgoT().TempDir()
		Expect(renderJobAt(filepath.Join(releaseDir, "jobs", "register-broker"), map[string]any{"broker_url": "https://b.example.com:443",
			"cf":             map[string]any{"client_id": "errands", "client_secret": "it's secret", "ca_cert": "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n"},
			"service_access": map[string]any{"redis-large": []any{"org a", "b"}}}, dir)).To(Succeed())
		run, err := os.ReadFile(filepath.Join(dir, "bin/run"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(run)).To(ContainSubstring(`blacksmith register-broker --broker-url https://b.example.com:443 --default-access all ` +
			`--org redis-large\=org\ a --org redis-large\=b --cf-ca-cert /var/vcap/jobs/register-broker/config/cf-ca.pem -c "$conf"`))
		Expect(string(run)).To(ContainSubstring(`export BLACKSMITH_ERRAND_CF_CLIENT_SECRET=it\'s\ secret`))
		pem, err := os.ReadFile(filepath.Join(dir, "config/cf-ca.pem"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(pem)).To(HavePrefix("-----BEGIN CERTIFICATE-----"))
	})
})
