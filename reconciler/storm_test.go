package reconciler_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// A storm of Director 503s (a fault probe's) quarantined healthy instances
// for the full backoff; one deployment failing among healthy ones still is.
var _ = Describe("a run while the Director is failing", func() {
	It("quarantines none of the deployments that met its transient faults, and the next run takes them", func() {
		e := newEnv(envOptions{seed: 8, config: func(c *config.ReconcilerConfig) { c.RetryAttempts = 0 }})
		for _, name := range e.names[:3] {
			Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name", Deployment: name, Status: http.StatusServiceUnavailable})).To(Succeed())
		}
		s := e.run(report.RunOptions{})
		Expect(s.Failed).To(Equal(3))
		Expect(s.NewlyQuarantined).To(BeEmpty(), "the Director's failures, not the deployments'")
		Expect(s.Excused).To(Equal(3))
		Expect(e.m.Status().Quarantined).To(BeEmpty())

		e.sim.Faults().Clear()
		s = e.run(report.RunOptions{})
		Expect(s.Failed).To(BeZero())
		Expect(s.Quarantined).To(BeEmpty(), "nothing skipped")
		Expect(e.index()).To(HaveLen(len(e.names)), "every instance recorded")
	})

	It("still quarantines the one deployment that fails among healthy ones", func() {
		e := newEnv(envOptions{seed: 8, config: func(c *config.ReconcilerConfig) { c.RetryAttempts = 0 }})
		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name", Deployment: e.names[0], Status: http.StatusServiceUnavailable})).To(Succeed())
		s := e.run(report.RunOptions{})
		Expect(s.NewlyQuarantined).To(ConsistOf(HaveField("Deployment", e.names[0])))
		Expect(s.Excused).To(BeZero())
	})
})
