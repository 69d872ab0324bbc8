package reconciler_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// claimingManifest is a deployment manifest whose properties.blacksmith names id.
func claimingManifest(name, id string) string {
	return "name: " + name + `
releases: [{name: redis, version: "16.1.0"}]
stemcells: [{alias: default, os: ubuntu-jammy, version: "1.506"}]
instance_groups:
- name: redis
  instances: 1
  azs: [z1]
  jobs: [{name: redis, release: redis}]
  vm_type: small
  stemcell: default
  networks: [{name: services}]
  properties:
    blacksmith: {service_id: redis, plan_id: redis-small, instance_id: ` + id + `}
`
}

var _ = Describe("deployments claiming the same instance", func() {
	It("gives the instance to the same deployment every run, lists the other as a conflict and writes nothing after the first run", func() {
		e := newEnv(envOptions{})
		for _, name := range []string{"cache-green", "cache-blue"} {
			Expect(e.sim.PutDeployment(claimingManifest(name, strayID))).To(Succeed())
		}
		// Half the manifest fetches answer late, so that either deployment
		// may be observed first.
		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name", Rate: 0.5, Delay: 50 * time.Millisecond})).To(Succeed())
		conflict := report.Conflict{InstanceID: strayID, Winner: "cache-blue", Loser: "cache-green"}
		for i := range 6 {
			writes := e.vaultWrites()
			s := e.run(report.RunOptions{Force: true})
			Expect(s.Errors).To(BeEmpty())
			Expect(e.index()).To(HaveKeyWithValue(strayID, HaveField("DeploymentName", "cache-blue")), "run %d", i+1)
			Expect(s.Conflicts).To(ConsistOf(conflict), "run %d", i+1)
			Expect(e.m.Status().Conflicts).To(ConsistOf(conflict), "run %d", i+1)
			Expect(s).To(haveCounts(2, 1, 1))
			if i > 0 {
				Expect(s.Writes).To(BeZero(), "run %d", i+1)
				Expect(s.Drift).To(BeZero(), "run %d", i+1)
				Expect(e.vaultWrites()).To(Equal(writes+2), "no Vault write but the run log's entry and the feed's mark (a forced run is a resync) in run %d", i+1)
			}
		}
	})
})
