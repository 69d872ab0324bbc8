package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"

	ccsim "github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

var orphanMounts atomic.Int64

// blacksmithOnce runs `blacksmith name -c config args...` to its end, with
// the environment env adds.
func blacksmithOnce(env []string, name, config string, args ...string) *gexec.Session {
	GinkgoHelper()
	cmd := exec.Command(blacksmithBin, append([]string{name, "-c", config}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + GinkgoT().TempDir()}, env...)
	s, err := gexec.Start(cmd, GinkgoWriter, GinkgoWriter)
	Expect(err).NotTo(HaveOccurred())
	Eventually(s).WithTimeout(60 * time.Second).Should(gexec.Exit())
	return s
}

var _ = Describe("blacksmith orphan-deployments, the real binary", func() {
	It("exits 10 listing the deployments the platform has no instance of, 0 when it has them all, 1 when it cannot be read", func() {
		cc, err := ccsim.New(ccsim.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cc.Close)
		_, err = cc.Foundation().Seed("blacksmith", 0)
		Expect(err).NotTo(HaveOccurred())
		space, err := cc.Foundation().AddSpace(cc.Foundation().AddOrg("o").GUID, "s")
		Expect(err).NotTo(HaveOccurred())

		// A Vault mount of its own: the suite's shared one holds other specs' instances.
		mount := fmt.Sprintf("orphans%d", orphanMounts.Add(1))
		Expect(vaultServer.EnableKV(mount, 2)).To(Succeed())
		env := []string{"BLACKSMITH_VAULT_MOUNT=" + mount, "BLACKSMITH_RECONCILER_ORPHAN_GRACE_PERIOD=0s"}
		config := writeConfig(freeAddr(), vaultServer.Addr, fmt.Sprintf(`cf:
  api: %s
  client_id: %s
  client_secret: %s
  broker_name: blacksmith
`, cc.URL(), ccsim.DefaultClientID, ccsim.DefaultClientSecret))

		kept, orphan := "0e0e0e0e-0000-4000-8000-0000000000a1", "0e0e0e0e-0000-4000-8000-0000000000a2"
		for _, id := range []string{kept, orphan} {
			simDeployment("name: redis-small-" + id + "\nreleases: [{name: redis, version: '16.1.0'}]\n")
		}
		Expect(blacksmithOnce(env, "reconcile", config)).To(gexec.Exit(0), "Vault learns both instances from the Director")

		plans := map[string]string{}
		for _, p := range cc.Foundation().Plans() {
			plans[p.CatalogID] = p.GUID
		}
		_, err = cc.Foundation().AddInstance(kept, "kept", plans["redis-small"], space.GUID,
			ccsim.LastOperation{Type: ccsim.OpCreate, State: ccsim.StateSucceeded})
		Expect(err).NotTo(HaveOccurred())

		s := blacksmithOnce(env, "orphan-deployments", config)
		Expect(s).To(gexec.Exit(10))
		Expect(string(s.Out.Contents())).To(And(ContainSubstring("redis-small-"+orphan), Not(ContainSubstring("redis-small-"+kept)),
			MatchRegexp(`\d+ orphan deployment\(s\); the platform lists 1 instance\(s\) of the broker's 3 plan\(s\): 1 in step`)))
		s = blacksmithOnce(env, "orphan-deployments", config, "--json")
		Expect(s).To(gexec.Exit(10))
		var list []map[string]any
		Expect(json.Unmarshal(s.Out.Contents(), &list)).To(Succeed())
		Expect(list).To(ContainElement(And(HaveKeyWithValue("deployment_name", "redis-small-"+orphan), HaveKeyWithValue("instance_id", orphan))))
		Expect(list).NotTo(ContainElement(HaveKeyWithValue("instance_id", kept)))

		// The platform has them all (the shared Director holds other specs' deployments, which this mount learnt too).
		for _, o := range list {
			_, err = cc.Foundation().AddInstance(o["instance_id"].(string), "found", plans[o["plan_id"].(string)], space.GUID,
				ccsim.LastOperation{Type: ccsim.OpCreate, State: ccsim.StateSucceeded})
			Expect(err).NotTo(HaveOccurred())
		}
		s = blacksmithOnce(env, "orphan-deployments", config, "--json")
		Expect(s).To(gexec.Exit(0))
		Expect(string(s.Out.Contents())).To(Equal("[]\n"))

		Expect(cc.Knobs().InjectFailure(ccsim.Failure{Endpoint: "/v3/service_instances", Status: 503})).To(Succeed())
		s = blacksmithOnce(env, "orphan-deployments", config)
		Expect(s).To(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(ContainSubstring("CF-ServiceUnavailable"))
		Expect(s.Out.Contents()).To(BeEmpty(), "nothing listed from a platform it could not read")

		noCF := writeConfig(freeAddr(), vaultServer.Addr, "")
		s = blacksmithOnce(env, "orphan-deployments", noCF)
		Expect(s).To(gexec.Exit(1))
		Expect(string(s.Err.Contents())).To(ContainSubstring("set cf.api"))
	})
})
