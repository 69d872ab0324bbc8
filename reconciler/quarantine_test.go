package reconciler_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("quarantine across runs", func() {
	const backoff = 3 * time.Second
	quarantineConfig := func(c *config.ReconcilerConfig) {
		c.RetryAttempts, c.RetryDelay = 2, time.Second // the failing run waits 1.5 s at least (two rounds)
		c.Quarantine = config.QuarantineConfig{Backoff: backoff, MaxBackoff: 10 * backoff}
	}

	It("sets a permanently failing deployment aside: later runs skip it until its backoff expires, at the clean cost, writing nothing", func() {
		e := newEnv(envOptions{seed: 4, config: quarantineConfig, clock: true})
		bad := e.names[2]
		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name", Deployment: bad})).To(Succeed())
		manifestGets := func() int { return e.sim.Stats().Requests["GET /deployments/:name"] }

		// Run 1 meets the failure: in-run retries, then the deployment is quarantined.
		first := e.run(report.RunOptions{Force: true})
		Expect(first.Result).To(Equal("failure"))
		Expect(first.Failed).To(Equal(1))
		Expect(first.Created).To(Equal(3))
		Expect(first.NewlyQuarantined).To(ConsistOf(And(
			HaveField("Deployment", bad), HaveField("InstanceID", instanceID(bad)), HaveField("Failures", 1),
			HaveField("LastError", ContainSubstring("status 500")))))
		Expect(counter(e.reg, "blacksmith_reconciler_instances", map[string]string{"state": "quarantined"})).To(Equal(1.0))

		// Runs 2 and 3, within the backoff: skipped, no request for it, nothing written, partial, fast.
		var skipped []report.Summary
		for range 2 {
			gets, writes := manifestGets(), e.vaultWrites()
			s := e.run(report.RunOptions{Force: true})
			Expect(manifestGets()-gets).To(Equal(3), "only the three healthy deployments are fetched (forced run)")
			Expect(e.vaultWrites()-writes).To(BeEquivalentTo(2), "nothing is written but the run log's entry and the feed's mark (a forced run is a resync)")
			Expect(s.Result).To(Equal("partial"))
			Expect(s.ErrorCount).To(BeZero())
			Expect(s.Quarantined).To(ConsistOf(HaveField("Deployment", bad)))
			Expect(s.Converged).To(BeFalse())
			Expect(s.Blockers).To(ContainElement("1 quarantined items skipped"))
			skipped = append(skipped, s)
		}
		for _, s := range skipped {
			Expect(s.Duration).To(BeNumerically("<", first.Duration-time.Second),
				"a skipped run costs what a clean one does: no wait for later rounds (the first one waited at least 1.5 s)")
		}
		st := e.m.Status()
		failedAt := first.StartedAt.Add(first.Duration)
		Expect(st.Quarantined).To(ConsistOf(And(HaveField("Deployment", bad), HaveField("NextAttempt", BeTemporally("~", failedAt.Add(backoff), time.Second)))))
		Expect(counter(e.reg, "blacksmith_reconciler_runs_total", map[string]string{"result": "partial"})).To(Equal(2.0))
		Expect(counter(e.reg, "blacksmith_reconciler_last_success_timestamp_seconds", nil)).To(BeNumerically(">", 0),
			"a partial run did all it tried")

		// Once the backoff has expired the next run tries it again: it fails and backs off for twice as long.
		e.clock.advance(st.Quarantined[0].NextAttempt.Sub(e.clock.now()))
		again := e.run(report.RunOptions{Force: true})
		Expect(again.Result).To(Equal("failure"))
		Expect(again.NewlyQuarantined).To(ConsistOf(And(HaveField("Failures", 2),
			HaveField("NextAttempt", BeTemporally("~", again.StartedAt.Add(again.Duration).Add(2*backoff), time.Second)))))
		gets := manifestGets()
		s := e.run(report.RunOptions{Force: true})
		Expect(s.Result).To(Equal("partial"))
		Expect(manifestGets() - gets).To(Equal(3))

		// The operator asks for it by instance id: tried at once, and released when it is in step.
		e.sim.Faults().Clear()
		forced := e.run(report.RunOptions{Instances: []string{instanceID(bad)}})
		Expect(forced.Result).To(Equal("success"))
		Expect(forced.Created).To(Equal(1))
		Expect(forced.Released).To(ConsistOf(HaveField("Deployment", bad)))
		Expect(e.m.Status().Quarantined).To(BeEmpty())
		Expect(counter(e.reg, "blacksmith_reconciler_instances", map[string]string{"state": "quarantined"})).To(BeZero())
		Expect(e.run(report.RunOptions{}).Converged).To(BeTrue())
	})

	It("keeps the quarantine in Vault: a new manager (a restarted daemon) skips the item too", func() {
		e := newEnv(envOptions{seed: 2, config: quarantineConfig})
		bad := e.names[0]
		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name/vms", Deployment: bad})).To(Succeed())
		Expect(e.run(report.RunOptions{}).NewlyQuarantined).To(HaveLen(1))

		e.reg = prometheus.NewRegistry()
		restarted := e.newManager()
		s, err := restarted.RunOnce(context.Background(), report.RunOptions{})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Result).To(Equal("partial"))
		Expect(s.Quarantined).To(ConsistOf(HaveField("Deployment", bad)))

		s, err = restarted.RunOnce(context.Background(), report.RunOptions{RetryQuarantined: true})
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Result).To(Equal("failure"), "asked to retry every quarantined item, it meets the failure again")
		Expect(s.NewlyQuarantined).To(ConsistOf(HaveField("Failures", 2)))
	})

	It("quarantines an instance whose records cannot be written, and a dry run changes nothing", func() {
		e := newEnv(envOptions{seed: 3, proxy: true, config: quarantineConfig})
		broken := instanceID(e.names[1])
		e.proxy.failWrites("/"+broken+"/metadata", -1)
		s := e.run(report.RunOptions{})
		Expect(s.NewlyQuarantined).To(ConsistOf(And(HaveField("InstanceID", broken), HaveField("Deployment", ""))))

		plan := e.run(report.RunOptions{DryRun: true})
		Expect(plan.Quarantined).To(ConsistOf(HaveField("InstanceID", broken)))
		e.proxy.heal()
		Expect(e.run(report.RunOptions{}).Result).To(Equal("partial"), "the dry run did not release it")
	})
})
