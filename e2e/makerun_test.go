package e2e_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

// make run's script, with the binaries this suite built: the README's first
// command must come up with its sample state and stop everything it started.
var _ = Describe("make run (ci/run-local.sh)", func() {
	ports := []string{"127.0.0.1:8200", "127.0.0.1:25555", "127.0.0.1:9022", "127.0.0.1:3000"}

	It("comes up with the sample state, answers, and stops all it started on SIGTERM", func() {
		for _, p := range ports {
			if listening(p) {
				if os.Getenv("CI") == "true" {
					Fail(p + " is in use: make run's ports must be free under CI")
				}
				Skip(p + " is in use (a make run of yours?)")
			}
		}
		vaultBin := os.Getenv("VAULT_BIN")
		if vaultBin == "" {
			vaultBin = "vault"
		}
		cmd := exec.Command("bash", "ci/run-local.sh")
		cmd.Dir = filepath.Dir(filepath.Dir(catalogDir)) // the repository root
		cmd.Env = append(os.Environ(), "VAULT_BIN="+vaultBin, "BLACKSMITH_BIN="+blacksmithBin, "DIRECTOR_SIM_BIN="+simBin, "CC_SIM_BIN="+ccBin)
		s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
		Expect(err).NotTo(HaveOccurred())
		// SIGTERM first: the script stops what it started on it (a kill would leave them holding the ports).
		DeferCleanup(func() { s.Terminate().Wait(30 * time.Second); s.Kill().Wait(10 * time.Second) })

		d := &daemon{url: "http://127.0.0.1:3000"}
		Eventually(func() map[string]any {
			code, body := d.do("GET", "/b/reconcile", "operator", "operator")
			if code != 200 {
				return nil
			}
			return decode(body)
		}).WithTimeout(90*time.Second).WithPolling(500*time.Millisecond).Should(And(
			HaveKeyWithValue("orphans", HaveLen(1)),
			HaveKeyWithValue("unmatched", ConsistOf(HaveKeyWithValue("deployment", "concourse"))),
			HaveKeyWithValue("last_run", HaveKeyWithValue("matched", BeNumerically("==", 4))),
			HaveKeyWithValue("platform", HaveKeyWithValue("orphan_deployments", ConsistOf(HaveKeyWithValue("deployment", HavePrefix("redis-small-"))))),
		), "the legacy db migrated, three records restored from BOSH, the orphan flagged, concourse unmatched; "+
			"the platform lacks the first deployment's instance (recorded since yesterday)")
		// The first run restored three of the platform's instances from their deployments (reported platform-only,
		// restorable from a deployment); the next one holds them in step.
		Eventually(func() int {
			code, _ := d.do("POST", "/b/reconcile?wait=60s", "operator", "operator")
			return code
		}).WithTimeout(60 * time.Second).WithPolling(time.Second).Should(Equal(200))
		code, body := d.do("GET", "/b/reconcile", "operator", "operator")
		Expect(code).To(Equal(200))
		Expect(decode(body)).To(HaveKeyWithValue("platform", And(HaveKeyWithValue("state", "known"),
			HaveKeyWithValue("counts", And(HaveKeyWithValue("orphan_deployment", 1.0), HaveKeyWithValue("platform_only", 1.0),
				HaveKeyWithValue("in_step", 3.0), HaveKeyWithValue("orphan", 1.0))),
			HaveKeyWithValue("platform_only", ConsistOf(HaveKeyWithValue("instance_id", "7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"))))),
			"one instance only the platform has; the orphan-to-be's record beside the platform's")
		code, _ = d.get("/healthz", "", "")
		Expect(code).To(Equal(200))

		s.Terminate()
		Eventually(s).WithTimeout(30 * time.Second).Should(gexec.Exit())
		Expect(string(s.Out.Contents())).To(ContainSubstring("stopped Vault, the Director and Cloud Controller simulators and blacksmith"))
		for _, p := range ports {
			Eventually(func() bool { return listening(p) }).WithTimeout(10*time.Second).Should(BeFalse(), p+" still answers")
		}
	})
})

// listening says whether something accepts connections at addr.
func listening(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}
