package cf_test

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

var _ = Describe("failures", func() {
	var (
		cc    *sim.CC
		c     *cf.Client
		plans []string
	)
	BeforeEach(func() {
		cc = startCC(sim.Options{})
		_, err := cc.Foundation().Seed("blacksmith", 5)
		Expect(err).NotTo(HaveOccurred())
		c = newClient(cc.URL(), func(o *cf.Options) { o.PerPage = 2 })
		plans = planGUIDs(c, "blacksmith")
	})

	It("says ErrUnavailable for a 503, with the CF error", func() {
		Expect(cc.Knobs().InjectFailure(sim.Failure{Endpoint: listKey, Status: 503, Count: 1})).To(Succeed())
		instances, err := c.ServiceInstances(ctxFor(5*time.Second), plans)
		Expect(err).To(MatchError(cf.ErrUnavailable))
		Expect(instances).To(BeNil())
		var api *cf.APIError
		Expect(errors.As(err, &api)).To(BeTrue())
		Expect(api.Status).To(Equal(503))
		Expect(api.Title).To(Equal("CF-ServiceUnavailable"))
	})

	It("says ErrUnavailable for a 500 on GET /v3/service_instances/:guid", func() {
		Expect(cc.Knobs().InjectFailure(sim.Failure{Endpoint: "/v3/service_instances/:guid", Status: 500, Count: 1})).To(Succeed())
		_, err := c.ServiceInstance(ctxFor(5*time.Second), "any")
		Expect(err).To(MatchError(cf.ErrUnavailable))
		Expect(err).NotTo(MatchError(cf.ErrNotFound))
	})

	It("returns no list when its pages hold fewer instances than its first page announced (one deleted while it was read)", func() {
		before, err := c.ServiceInstances(ctxFor(5*time.Second), plans)
		Expect(err).NotTo(HaveOccurred())
		Expect(before).To(HaveLen(5))
		cc.Knobs().SetLatency(200 * time.Millisecond)
		cc.ResetStats()
		go func() {
			defer GinkgoRecover()
			waitForRequests(cc, listKey, 2) // the first page (total_results 5) is read, the second waits the latency
			Expect(cc.Foundation().RemoveInstance(before[4].GUID)).To(BeTrue())
		}()
		instances, err := c.ServiceInstances(ctxFor(10*time.Second), plans)
		Expect(err).To(MatchError(cf.ErrUnavailable), "never read as a platform without the instances it left out")
		Expect(err).To(MatchError(ContainSubstring("the first announced 5 (total_results)")))
		Expect(instances).To(BeNil())
	})

	It("returns no list when a page in the middle is cut short", func() {
		cc.Knobs().SetLatency(200 * time.Millisecond)
		cc.ResetStats()
		go func() {
			defer GinkgoRecover()
			waitForRequests(cc, listKey, 2) // the second page has begun, and waits the latency
			Expect(cc.Knobs().InjectFailure(sim.Failure{Endpoint: listKey, CutShort: true, Count: 1})).To(Succeed())
		}()
		instances, err := c.ServiceInstances(ctxFor(10*time.Second), plans)
		Expect(err).To(MatchError(cf.ErrUnavailable))
		Expect(instances).To(BeNil())
		Expect(cc.Stats().Requests[listKey]).To(Equal(2))
	})

	It("returns no list when a page in the middle answers 503", func() {
		cc.Knobs().SetLatency(200 * time.Millisecond)
		cc.ResetStats()
		go func() {
			defer GinkgoRecover()
			waitForRequests(cc, listKey, 3)
			Expect(cc.Knobs().InjectFailure(sim.Failure{Endpoint: listKey, Status: 503, Count: 1})).To(Succeed())
		}()
		instances, err := c.ServiceInstances(ctxFor(10*time.Second), plans)
		Expect(err).To(MatchError(cf.ErrUnavailable))
		Expect(instances).To(BeNil())
	})

	It("says ErrUnavailable for a page cut short", func() {
		Expect(cc.Knobs().InjectFailure(sim.Failure{Endpoint: "/v3/service_plans", CutShort: true, Count: 1})).To(Succeed())
		_, err := c.ServicePlans(ctxFor(5*time.Second), "blacksmith")
		Expect(err).To(MatchError(cf.ErrUnavailable))
	})

	It("says ErrRateLimited with the reset time for a 429", func() {
		cc.Knobs().SetRateLimit(1, time.Hour)
		_, err := c.ServiceInstance(ctxFor(5*time.Second), "a")
		Expect(err).To(MatchError(cf.ErrNotFound))
		_, err = c.ServiceInstances(ctxFor(5*time.Second), plans)
		Expect(err).To(MatchError(cf.ErrRateLimited))
		Expect(err).NotTo(MatchError(cf.ErrUnavailable))
		var api *cf.APIError
		Expect(errors.As(err, &api)).To(BeTrue())
		Expect(api.Title).To(Equal("CF-RateLimitExceeded"))
		Expect(api.Reset).To(BeTemporally(">", time.Now().Add(50*time.Minute)))
		Expect(api.Reset).To(BeTemporally("<=", time.Now().Add(time.Hour+time.Second)))
	})

	It("refuses an answer over MaxPageBytes rather than cutting the list", func() {
		small := newClient(cc.URL(), func(o *cf.Options) { o.MaxPageBytes = 4096 })
		instances, err := small.ServiceInstances(ctxFor(5*time.Second), plans)
		Expect(err).To(MatchError(cf.ErrAnswerTooLarge))
		Expect(err).To(MatchError(cf.ErrUnavailable))
		Expect(instances).To(BeNil())
	})

	It("says ErrUnavailable when nothing answers, and does no I/O in New", func() {
		dead := startCC(sim.Options{})
		api := dead.URL()
		Expect(dead.Close()).To(Succeed())
		c := newClient(api)
		_, err := c.ServicePlans(ctxFor(5*time.Second), "blacksmith")
		Expect(err).To(MatchError(cf.ErrUnavailable))
	})

	It("honours the caller's context, and a cancelled call is not unavailable", func() {
		cc.Knobs().SetLatency(time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.ServiceInstances(ctx, plans)
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(err).NotTo(MatchError(cf.ErrUnavailable))
		Expect(time.Since(start)).To(BeNumerically("<", 900*time.Millisecond))
	})

	It("times a request out after Timeout, as unavailable", func() {
		cc.Knobs().SetLatency(2 * time.Second)
		slow := newClient(cc.URL(), func(o *cf.Options) { o.Timeout = 200 * time.Millisecond })
		_, err := slow.ServicePlans(ctxFor(5*time.Second), "blacksmith")
		Expect(err).To(MatchError(cf.ErrUnavailable))
	})
})
