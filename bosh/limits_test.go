package bosh_test

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("Limits toward one Director", func() {
	It("sends no more requests per second than the rate limit allows", func() {
		d := startDirector(sim.Options{})
		c := newClient(d, func(o *bosh.Options) { o.RateLimit = 20; o.RateBurst = 1 })
		ctx := ctxFor(10 * time.Second)
		start := time.Now()
		for range 11 {
			_, err := c.Info(ctx)
			Expect(err).NotTo(HaveOccurred())
		}
		// 1 at once, then 10 at 50 ms intervals.
		Expect(time.Since(start)).To(BeNumerically(">=", 500*time.Millisecond))
		Expect(d.Stats().Requests).To(HaveKeyWithValue("GET /info", 11))
	})

	It("fails at once, with DeadlineExceeded, a request the rate limit would hold past its deadline", func() {
		d := startDirector(sim.Options{})
		c := newClient(d, func(o *bosh.Options) { o.RateLimit = 0.1; o.RateBurst = 1 })
		_, err := c.Info(ctxFor(10 * time.Second))
		Expect(err).NotTo(HaveOccurred())
		start := time.Now()
		_, err = c.Info(ctxFor(5 * time.Second))
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(time.Since(start)).To(BeNumerically("<", 2500*time.Millisecond)) // not held until the deadline
		Expect(d.Stats().Requests).To(HaveKeyWithValue("GET /info", 1))
	})

	It("keeps at most MaxInFlight requests in flight", func() {
		const latency = 200 * time.Millisecond
		d := startDirector(sim.Options{Latency: latency})
		c := newClient(d, func(o *bosh.Options) { o.MaxInFlight = 2 })
		ctx := ctxFor(10 * time.Second)

		var peak atomic.Int64
		stop := make(chan struct{})
		var sampler sync.WaitGroup
		sampler.Go(func() {
			for {
				peak.Store(max(peak.Load(), int64(d.Stats().Active)))
				select {
				case <-stop:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		})

		start := time.Now()
		var calls sync.WaitGroup
		for range 6 {
			calls.Go(func() {
				defer GinkgoRecover()
				_, err := c.Info(ctx)
				Expect(err).NotTo(HaveOccurred())
			})
		}
		calls.Wait()
		elapsed := time.Since(start)
		close(stop)
		sampler.Wait()

		Expect(elapsed).To(BeNumerically(">=", 3*latency), "6 requests, 2 at a time")
		Expect(peak.Load()).To(BeNumerically("<=", 2))
		Expect(peak.Load()).To(BeNumerically(">=", 1))
	})

	It("frees a waiting request when its context ends", func() {
		d := startDirector(sim.Options{Latency: 2 * time.Second})
		c := newClient(d, func(o *bosh.Options) { o.MaxInFlight = 1 })
		holder := ctxFor(10 * time.Second)
		go func() { _, _ = c.Info(holder) }() // holds the only slot
		Eventually(func() int { return d.Stats().Active }).Should(Equal(1))
		start := time.Now()
		_, err := c.Info(ctxFor(100 * time.Millisecond))
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(err.Error()).To(ContainSubstring("waiting for a free request slot"))
		Expect(time.Since(start)).To(BeNumerically("<", time.Second))
	})
})
