package cf_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

var _ = Describe("metrics", func() {
	It("counts requests by endpoint and code class, starting at 0, on a shared registry", func() {
		cc := startCC(sim.Options{})
		_, err := cc.Foundation().Seed("blacksmith", 3)
		Expect(err).NotTo(HaveOccurred())
		reg := prometheus.NewRegistry()
		c := newClient(cc.URL(), func(o *cf.Options) { o.Registerer = reg; o.PerPage = 2 })
		_ = newClient(cc.URL(), func(o *cf.Options) { o.Registerer = reg }) // a second client reuses the counter
		Expect(counter(reg, "/v3/service_instances", "2xx")).To(BeZero())

		_, err = c.ServiceInstances(ctxFor(5*time.Second), planGUIDs(c, "blacksmith"))
		Expect(err).NotTo(HaveOccurred())
		_, err = c.ServiceInstance(ctxFor(5*time.Second), "gone")
		Expect(err).To(MatchError(cf.ErrNotFound))
		Expect(cc.Knobs().InjectFailure(sim.Failure{Endpoint: "/v3/service_plans", Status: 503, Count: 1})).To(Succeed())
		_, err = c.ServicePlans(ctxFor(5*time.Second), "blacksmith")
		Expect(err).To(MatchError(cf.ErrUnavailable))

		Expect(counter(reg, "/", "2xx")).To(Equal(1.0))
		Expect(counter(reg, "/oauth/token", "2xx")).To(Equal(1.0))
		Expect(counter(reg, "/v3/service_plans", "2xx")).To(Equal(2.0)) // 3 plans, 2 a page
		Expect(counter(reg, "/v3/service_plans", "5xx")).To(Equal(1.0))
		Expect(counter(reg, "/v3/service_instances", "2xx")).To(Equal(2.0))
		Expect(counter(reg, "/v3/service_instances/:guid", "4xx")).To(Equal(1.0))
	})

	It("works without a registry", func() {
		cc := startCC(sim.Options{})
		c := newClient(cc.URL())
		_, err := c.ServicePlans(ctxFor(5*time.Second), "blacksmith")
		Expect(err).NotTo(HaveOccurred())
	})
})
