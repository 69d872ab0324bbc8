package reconciler_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("failing fast", func() {
	// retryBudget is what one item's in-run retries may wait at most: 3
	// retries from 1s, doubling (before jitter, which only shortens them).
	const retryBudget = (1 + 2 + 4) * time.Second
	slowRetries := func(c *config.ReconcilerConfig) {
		c.RetryAttempts, c.RetryDelay, c.MaxConcurrency, c.BatchSize = 3, time.Second, 5, 50
	}

	It("ends the run within moments, naming the Director, when the Director dies mid-run", func() {
		e := newEnv(envOptions{seed: 300, config: slowRetries})
		e.sim.Knobs().SetLatency(5 * time.Millisecond)
		killed := make(chan time.Time, 1)
		go func() {
			defer GinkgoRecover()
			Eventually(func() int { return e.sim.Stats().Requests["GET /deployments/:name"] }).
				WithPolling(time.Millisecond).Should(BeNumerically(">=", 60))
			Expect(e.sim.Close()).To(Succeed())
			killed <- time.Now()
		}()
		s, err := e.m.RunOnce(context.Background(), report.RunOptions{})
		end := time.Now()
		Expect(err).To(MatchError(reconciler.ErrCircuitOpen))
		Expect(err.Error()).To(ContainSubstring("director: 20 requests in a row failed"))
		at := <-killed
		GinkgoWriter.Printf("Director killed after %d manifests; the run ended %s later (run took %s)\n",
			e.sim.Stats().Requests["GET /deployments/:name"], end.Sub(at), s.Duration)
		Expect(end.Sub(at)).To(BeNumerically("<", retryBudget/2),
			"without the breaker the deployments left would each wait out their retries (%s)", retryBudget)
		Expect(s.Result).To(Equal("failure"))
		Expect(s.Errors).To(ContainElement(ContainSubstring("circuit open")))
		Expect(s.ErrorCount).To(BeNumerically("<=", 2), "one reason, not one error per deployment left")
		Expect(s.NewlyQuarantined).To(BeEmpty(), "a run stopped by an outage quarantines nothing")
		Expect(len(e.index())).To(BeNumerically(">=", 20), "what was done before the outage is kept")
		Expect(e.m.Status().LastRun.Blockers).To(ContainElement(ContainSubstring("the run did not complete")))
	})

	It("stops at a Vault outage, and the next run tries again from the start", func() {
		e := newEnv(envOptions{seed: 40, proxy: true, config: func(c *config.ReconcilerConfig) {
			slowRetries(c)
			c.BreakerThreshold = 5
		}})
		e.proxy.failWrites("/", -1)
		start := time.Now()
		s, err := e.m.RunOnce(context.Background(), report.RunOptions{})
		Expect(err).To(MatchError(reconciler.ErrCircuitOpen))
		Expect(err.Error()).To(ContainSubstring("vault: 5 requests in a row failed"))
		Expect(time.Since(start)).To(BeNumerically("<", retryBudget))
		Expect(s.Created).To(BeZero())

		e.proxy.heal()
		next := e.run(report.RunOptions{})
		Expect(next.Result).To(Equal("success"))
		Expect(next.Created).To(Equal(40))
	})

	It("finishes within 3x its clean duration when 30% of the Director's answers are 500s", func() {
		// Retries go to later rounds of the run: a failing deployment never
		// holds a worker while it waits, so the run costs the share of
		// requests that fail plus the waits between rounds.
		flaky := func(c *config.ReconcilerConfig) {
			c.RetryAttempts, c.RetryDelay, c.MaxConcurrency = 3, 100*time.Millisecond, 5
		}
		clean := newEnv(envOptions{seed: 300, config: flaky})
		clean.sim.Knobs().SetLatency(30 * time.Millisecond)
		base := clean.run(report.RunOptions{})
		Expect(base.Created).To(Equal(300))

		e := newEnv(envOptions{seed: 300, config: flaky})
		e.sim.Knobs().SetLatency(30 * time.Millisecond)
		for _, ep := range []string{"GET /deployments/:name", "GET /deployments/:name/vms"} {
			Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: ep, Rate: 0.3})).To(Succeed())
		}
		s, err := e.m.RunOnce(context.Background(), report.RunOptions{})
		Expect(err).NotTo(HaveOccurred(), "30%% of failures never trips the breaker")
		GinkgoWriter.Printf("clean run %s, 30%% 500s %s (%.2fx), failed %d\n", base.Duration, s.Duration,
			s.Duration.Seconds()/base.Duration.Seconds(), s.Failed)
		Expect(s.Duration).To(BeNumerically("<", 3*base.Duration))
		Expect(s.Created + s.Failed).To(Equal(300))
		Expect(s.Failed).To(BeNumerically("<", 60), "most deployments succeed within their retries")
	})
})
