package reconciler_test

import (
	"context"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("visible matching", func() {
	const legacyID = "5f1e7a2c-0b3d-4c9e-8f6a-2d4b6c8e0a1f"
	legacy := "legacy-redis-" + legacyID
	rule := config.Rule{Name: "legacy", Pattern: `^legacy-redis-(?P<instance>[0-9a-f-]{36})$`, ServiceID: "redis", PlanID: "redis-small"}

	It("keeps strategy and confidence in the index record, and reports a match below min_confidence without writing it", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) {
			c.Rules, c.MinConfidence = []config.Rule{rule}, 0.85
		}})
		Expect(e.sim.PutDeployment(fmt.Sprintf("name: %s\nreleases: [{name: redis, version: '1'}]\n", legacy))).To(Succeed())

		s := e.run(report.RunOptions{})
		Expect(s.Created).To(Equal(2))
		Expect(s.MatchedBy).To(Equal(map[report.Strategy]int{report.StrategyName: 2}))
		Expect(s.LowConfidence).To(ConsistOf(And(HaveField("Deployment", legacy),
			HaveField("Match.Strategy", report.StrategyRule), HaveField("Match.Confidence", 0.8))))
		Expect(s.Blockers).To(ContainElement("1 matches below reconciler.min_confidence"))
		Expect(e.m.Status().Unmatched).To(ConsistOf(And(HaveField("Deployment", legacy),
			HaveField("Reason", ContainSubstring("below reconciler.min_confidence 0.85")))))
		idx := e.index()
		Expect(idx).NotTo(HaveKey(legacyID), "reported, not written")
		for _, rec := range idx {
			Expect(rec.MatchStrategy).To(Equal("name"))
			Expect(rec.MatchConfidence).To(Equal(0.9))
		}

		e.cfg.MinConfidence = 0
		e.m = e.newManagerWith(nil)
		plan := e.run(report.RunOptions{DryRun: true}).Plan
		Expect(plan.Creates).To(ConsistOf(And(HaveField("InstanceID", legacyID), HaveField("Strategy", report.StrategyRule),
			HaveField("Confidence", 0.8))))
		Expect(e.run(report.RunOptions{}).Created).To(Equal(1))
		Expect(e.index()[legacyID]).To(And(HaveField("MatchStrategy", "rule"), HaveField("MatchConfidence", 0.8),
			HaveField("MatchRule", "legacy")))
	})
})

var _ = Describe("history retention", func() {
	It("keeps the newest history.keep events of each instance a run changed", func() {
		e := newEnv(envOptions{seed: 3, config: func(c *config.ReconcilerConfig) { c.History.Keep = 3 }})
		ctx := context.Background()
		Expect(e.run(report.RunOptions{}).Created).To(Equal(3))
		for i := range 4 {
			for _, name := range e.names {
				changed := strings.TrimRight(e.manifest(name), "\n") + fmt.Sprintf("\ntags:\n  round: %q\n", fmt.Sprint(i))
				if i > 0 {
					changed = strings.Replace(e.manifest(name), fmt.Sprintf("round: \"%d\"", i-1), fmt.Sprintf("round: \"%d\"", i), 1)
				}
				Expect(e.sim.PutDeployment(changed)).To(Succeed())
			}
			Expect(e.run(report.RunOptions{Force: true}).Drift).To(Equal(3), "round %d", i)
		}
		for _, name := range e.names {
			events, err := e.store.Events(ctx, instanceID(name), 0)
			Expect(err).NotTo(HaveOccurred())
			Expect(kindsOf(events)).To(Equal([]string{"drift", "drift", "drift"}), "the first drift of %s was pruned", name)
		}
	})
})

var _ = Describe("reconciler.ignore", func() {
	It("leaves the Director's other deployments alone: not fetched, not unmatched, not blocking convergence", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.Ignore = []string{"cf", "concourse-.*"} }})
		Expect(e.sim.PutDeployment("name: cf\nreleases: [{name: capi, version: '1'}]\n")).To(Succeed())
		Expect(e.sim.PutDeployment("name: concourse-main\nreleases: [{name: concourse, version: '1'}]\n")).To(Succeed())
		Expect(e.sim.PutDeployment("name: cfx\nreleases: [{name: capi, version: '1'}]\n")).To(Succeed())
		e.run(report.RunOptions{})
		s := e.run(report.RunOptions{})
		Expect(s.DeploymentsSeen).To(Equal(5))
		Expect(s.Ignored).To(Equal(2))
		Expect(s.Unmatched).To(Equal(1), "cfx: a pattern matches whole names only")
		Expect(e.m.Status().Unmatched).To(ConsistOf(HaveField("Deployment", "cfx")))

		e.sim.RemoveDeployment("cfx")
		e.sim.ResetStats()
		s = e.run(report.RunOptions{Force: true})
		Expect(s.Converged).To(BeTrue(), "%v", s.Blockers)
		Expect(e.sim.Stats().Requests).To(HaveKeyWithValue("GET /deployments/:name", 2), "only the two service deployments are fetched")
	})
})
