package cf_test

import (
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

var _ = Describe("tokens", func() {
	It("reads GET / once and keeps the token until shortly before it expires", func() {
		cc := startCC(sim.Options{TokenTTL: time.Second})
		_, err := cc.Foundation().Seed("blacksmith", 2)
		Expect(err).NotTo(HaveOccurred())
		var clock atomic.Int64 // the client's clock, in nanoseconds past now
		c := newClient(cc.URL(), func(o *cf.Options) {
			o.Now = func() time.Time { return time.Now().Add(time.Duration(clock.Load())) }
		})
		plans := planGUIDs(c, "blacksmith")
		_, err = c.ServiceInstances(ctxFor(5*time.Second), plans)
		Expect(err).NotTo(HaveOccurred())
		Expect(cc.Stats().Tokens).To(Equal(1))

		clock.Store(int64(1100 * time.Millisecond)) // by the client's clock, the token has expired
		_, err = c.ServiceInstances(ctxFor(5*time.Second), plans)
		Expect(err).NotTo(HaveOccurred())
		stats := cc.Stats()
		Expect(stats.Tokens).To(Equal(2))
		Expect(stats.Requests["GET /"]).To(Equal(1))
		Expect(stats.Requests[listKey]).To(Equal(2)) // renewed before, not after a 401
	})

	It("renews a token refused with CF-InvalidAuthToken once, and asks again", func() {
		cc := startCC(sim.Options{})
		_, err := cc.Foundation().Seed("blacksmith", 2)
		Expect(err).NotTo(HaveOccurred())
		c := newClient(cc.URL())
		plans := planGUIDs(c, "blacksmith")
		cc.RevokeTokens()
		cc.ResetStats()
		instances, err := c.ServiceInstances(ctxFor(5*time.Second), plans)
		Expect(err).NotTo(HaveOccurred())
		Expect(instances).To(HaveLen(2))
		stats := cc.Stats()
		Expect(stats.Tokens).To(Equal(1))
		Expect(stats.Requests[listKey]).To(Equal(2)) // the 401, then the retry
	})

	It("says ErrUnauthorized for bad credentials, and is not unavailable", func() {
		cc := startCC(sim.Options{})
		c := newClient(cc.URL(), func(o *cf.Options) { o.ClientSecret = "wrong" })
		_, err := c.ServicePlans(ctxFor(5*time.Second), "blacksmith")
		Expect(err).To(MatchError(cf.ErrUnauthorized))
		Expect(err).NotTo(MatchError(cf.ErrUnavailable))
		Expect(err.Error()).To(ContainSubstring("Bad credentials"))
		Expect(err.Error()).NotTo(ContainSubstring("wrong"))
		Expect(cc.Stats().Tokens).To(BeZero())
		Expect(cc.Stats().Requests).NotTo(HaveKey("GET /v3/service_plans"))
	})
})
