package reconciler_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("retries", func() {
	retryTwice := func(c *config.ReconcilerConfig) { c.RetryAttempts, c.RetryDelay = 3, 40*time.Millisecond }

	It("retries failed Vault writes with growing waits, and goes on with the other instances", func() {
		e := newEnv(envOptions{seed: 4, proxy: true, config: retryTwice})
		flaky, broken := instanceID(e.names[0]), instanceID(e.names[1])
		f1 := e.proxy.failWrites("/"+flaky+"/metadata", 2)
		f2 := e.proxy.failWrites("/"+broken+"/metadata", -1)

		s := e.run(report.RunOptions{})
		Expect(s.Created).To(Equal(3))
		Expect(s.Failed).To(Equal(1))
		Expect(s.ErrorCount).To(Equal(1))
		Expect(s.Errors[0]).To(ContainSubstring(broken))
		idx := e.index()
		Expect(idx).To(HaveKey(flaky))
		Expect(idx).NotTo(HaveKey(broken))
		Expect(idx).To(HaveLen(3))

		hits := e.proxy.hitTimes(f1)
		Expect(hits).To(HaveLen(3), "two failures, then success")
		Expect(hits[1].Sub(hits[0])).To(BeNumerically(">=", 20*time.Millisecond), "first wait: at least half of retry_delay")
		Expect(hits[2].Sub(hits[1])).To(BeNumerically(">=", 40*time.Millisecond), "second wait: at least half of twice retry_delay")
		Expect(e.proxy.hitTimes(f2)).To(HaveLen(4), "one attempt and retry_attempts retries")

		e.proxy.heal()
		Expect(e.run(report.RunOptions{}).Quarantined).To(ConsistOf(HaveField("InstanceID", broken)),
			"the next run skips it: quarantined until its backoff expires")
		next := e.run(report.RunOptions{Instances: []string{broken}})
		Expect(next.Errors).To(BeEmpty())
		Expect(next.Created).To(Equal(1), "a run asked for it retries it")
		Expect(e.index()).To(HaveKey(broken))
	})

	It("retries a failed index batch", func() {
		e := newEnv(envOptions{seed: 3, proxy: true, config: retryTwice})
		f := e.proxy.failWrites("/blacksmith/index/v1/shards/", 1)
		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Created).To(Equal(3))
		Expect(len(e.proxy.hitTimes(f))).To(BeNumerically(">=", 2))
		Expect(e.index()).To(HaveLen(3))
	})

	It("retries Director errors on the listing, manifests and VMs", func() {
		e := newEnv(envOptions{seed: 4, config: retryTwice})
		e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments", Count: 1})
		e.sim.Faults().Inject(sim.Failure{Endpoint: "/deployments/:name", Count: 2, Status: 502})
		e.sim.Faults().Inject(sim.Failure{Endpoint: "/deployments/:name/vms", Count: 1})
		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Created).To(Equal(4))
		Expect(e.sim.Stats().Requests).To(HaveKeyWithValue("GET /deployments", 2))
		Expect(e.sim.Faults().List()).To(BeEmpty(), "every injected failure was met")
	})

	It("goes on with the other deployments when one cannot be fetched, and retries it next run", func() {
		e := newEnv(envOptions{seed: 4, config: func(c *config.ReconcilerConfig) {
			c.RetryAttempts, c.MaxConcurrency = 1, 1
		}})
		e.sim.Faults().Inject(sim.Failure{Endpoint: "/deployments/:name/vms", Deployment: e.names[0], Count: 2})
		s := e.run(report.RunOptions{})
		Expect(s.Failed).To(Equal(1), "tried in two rounds, failed in both")
		Expect(s.Errors).To(ConsistOf(ContainSubstring(e.names[0])))
		Expect(s.Created).To(Equal(3))
		Expect(e.index()).NotTo(HaveKey(instanceID(e.names[0])))

		next := e.run(report.RunOptions{RetryQuarantined: true})
		Expect(next.Errors).To(BeEmpty())
		Expect(next.Created).To(Equal(1))
	})

	It("skips, without an error, a deployment deleted between the listing and its fetch", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.MaxConcurrency = 1 }})
		first := listedNames(e)[0]
		e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name", Delay: 500 * time.Millisecond, Count: 1})
		done := make(chan report.Summary, 1)
		go func() {
			defer GinkgoRecover()
			done <- e.run(report.RunOptions{})
		}()
		Eventually(func() int { return e.sim.Stats().Requests["GET /deployments/:name"] }).Should(Equal(1))
		e.sim.RemoveDeployment(first)
		var s report.Summary
		Eventually(done, 10*time.Second).Should(Receive(&s))
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Created).To(Equal(1))
		Expect(e.index()).NotTo(HaveKey(instanceID(first)))
	})

	It("flags no orphan and reports the failure when the listing keeps failing", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.RetryAttempts = 1 }})
		e.run(report.RunOptions{})
		e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments"})
		s, err := e.m.RunOnce(context.Background(), report.RunOptions{})
		Expect(err).To(HaveOccurred())
		Expect(s.ErrorCount).To(Equal(1))
		Expect(s.Writes).To(BeZero())
		for _, rec := range e.index() {
			Expect(rec.Orphaned).To(BeFalse())
		}
		Expect(counter(e.reg, "blacksmith_reconciler_runs_total", map[string]string{"result": "failure"})).To(Equal(1.0))
		Expect(e.m.Status().Converged).To(BeFalse())
		Expect(counter(e.reg, "blacksmith_reconciler_converged", nil)).To(BeZero())
		Expect(counter(e.reg, "blacksmith_reconciler_deployments", nil)).To(Equal(2.0), "a run that saw nothing does not say there is nothing")
		Expect(counter(e.reg, "blacksmith_reconciler_instances", map[string]string{"state": "matched"})).To(Equal(2.0))
	})
})

// listedNames returns the deployments in the order the Director lists them.
func listedNames(e *env) []string {
	GinkgoHelper()
	deps, err := e.bosh.Deployments(context.Background())
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, d := range deps {
		out = append(out, d.Name)
	}
	return out
}
