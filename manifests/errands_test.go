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
})
