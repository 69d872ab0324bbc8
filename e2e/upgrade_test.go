package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	osb "sigs.k8s.io/go-open-service-broker-client/v2"
)

// catalogAt copies the sample catalog to a new folder, with redis-small at
// maintenance_info version and its manifest template setting the top-level
// tag "templates" to tag ("" leaves the template as it is).
func catalogAt(version, tag string) string {
	GinkgoHelper()
	dir := GinkgoT().TempDir()
	Expect(exec.Command("cp", "-r", catalogDir+"/.", dir).Run()).To(Succeed())
	plan := filepath.Join(dir, "redis", "small", "plan.yml")
	text, err := os.ReadFile(plan)
	Expect(err).NotTo(HaveOccurred())
	Expect(string(text)).To(ContainSubstring("  version: 1.0.0\n"))
	Expect(os.WriteFile(plan, []byte(strings.Replace(string(text), "  version: 1.0.0\n", "  version: "+version+"\n", 1)), 0o644)).To(Succeed())
	if tag != "" {
		manifest := filepath.Join(dir, "redis", "small", "manifest.yml")
		text, err := os.ReadFile(manifest)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(manifest, append(text, []byte("\ntags:\n  templates: "+tag+"\n")...), 0o644)).To(Succeed())
	}
	return dir
}

// configWithCatalog is d's configuration serving the catalog in dir.
func configWithCatalog(d *daemon, dir string) string {
	GinkgoHelper()
	text, err := os.ReadFile(d.config)
	Expect(err).NotTo(HaveOccurred())
	out := strings.Replace(string(text), "dirs: ["+strconv.Quote(catalogDir)+"]", "dirs: ["+strconv.Quote(dir)+"]", 1)
	Expect(out).NotTo(Equal(string(text)))
	path := filepath.Join(GinkgoT().TempDir(), "blacksmith.conf")
	Expect(os.WriteFile(path, []byte(out), 0o600)).To(Succeed())
	return path
}

// upgradeAll runs `blacksmith upgrade-all -c config args...` to its end.
func upgradeAll(config string, args ...string) *gexec.Session {
	GinkgoHelper()
	cmd := exec.Command(blacksmithBin, append([]string{"upgrade-all", "-c", config}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + GinkgoT().TempDir()}
	s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(s).WithTimeout(90 * time.Second).Should(gexec.Exit())
	return s
}

var _ = Describe("blacksmith upgrade-all, the real binary", func() {
	It("lists, then upgrades an instance whose plan's version was raised (exit 0), and rolls a failed upgrade back (exit 1)", func() {
		d := startDaemon("")
		c := newOSBClient(d, brokerUser, brokerPass)
		const id = "e2e-upgrade-1"
		_, err := c.ProvisionInstance(&osb.ProvisionRequest{InstanceID: id, AcceptsIncomplete: true, ServiceID: "redis",
			PlanID: "redis-small", OrganizationGUID: "org", SpaceGUID: "space"})
		Expect(err).NotTo(HaveOccurred())
		eventuallySucceeded(c, id)
		// The suite shares one Vault mount: an instance left at a version above the sample catalog's
		// would be a catalog error in every later daemon's runs.
		DeferCleanup(func() {
			_, err := c.DeprovisionInstance(&osb.DeprovisionRequest{InstanceID: id, AcceptsIncomplete: true,
				ServiceID: "redis", PlanID: "redis-small"})
			Expect(err).NotTo(HaveOccurred())
			eventuallyDeleted(c, id)
		})
		deployment := "redis-small-" + id
		_, before := director("/deployments/" + deployment)

		raised := configWithCatalog(d, catalogAt("1.1.0", "one-one"))
		dry := upgradeAll(raised, "--dry-run", "--instance", id)
		Expect(dry.ExitCode()).To(Equal(0), string(dry.Err.Contents()))
		Expect(string(dry.Out.Contents())).To(MatchRegexp(id + `\s+` + deployment + `\s+redis-small\s+1\.0\.0\s+1\.1\.0\s+would_upgrade`))
		_, still := director("/deployments/" + deployment)
		Expect(still).To(Equal(before), "a dry run deploys nothing")

		up := upgradeAll(raised, "--instance", id, "--max-in-flight", "2")
		Expect(up.ExitCode()).To(Equal(0), string(up.Out.Contents()))
		Expect(string(up.Out.Contents())).To(MatchRegexp(id + `\s+.*\s+1\.0\.0\s+1\.1\.0\s+upgraded\s+\d+`))
		Expect(string(up.Err.Contents())).To(ContainSubstring("upgrade-all: " + id + " in_flight"))
		_, after := director("/deployments/" + deployment)
		Expect(after).To(ContainSubstring("one-one"))

		again := configWithCatalog(d, catalogAt("1.2.0", "one-two"))
		simAdmin("POST", "/_sim/next-task", map[string]string{"deployment": deployment})
		failed := upgradeAll(again, "--instance", id)
		Expect(failed.ExitCode()).To(Equal(1), "an instance left behind its version: non-zero")
		Expect(string(failed.Out.Contents())).To(MatchRegexp(id + `\s+.*\s+1\.1\.0\s+1\.2\.0\s+rolled_back\s+\d+,\d+`))
		Expect(string(failed.Out.Contents())).To(ContainSubstring("1 rolled_back"))
		_, now := director("/deployments/" + deployment)
		Expect(now).To(Equal(after), "the previous manifest runs again")

		bad := upgradeAll(again, "--max-in-flight", "0")
		Expect(bad.ExitCode()).To(Equal(2))
		Expect(string(bad.Err.Contents())).To(ContainSubstring("max_in_flight must be between 1 and 100, got 0"))
	})
})
