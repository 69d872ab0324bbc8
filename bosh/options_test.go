package bosh_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("New", func() {
	valid := func() bosh.Options {
		return bosh.Options{Address: "https://127.0.0.1:25555", Username: "admin", Password: "admin"}
	}

	It("fills in the defaults", func() {
		c, err := bosh.New(valid())
		Expect(err).NotTo(HaveOccurred())
		Expect(c.Name()).To(Equal("default"))
	})

	DescribeTable("refuses options it cannot work with, naming the problem",
		func(edit func(*bosh.Options), problem string) {
			o := valid()
			edit(&o)
			_, err := bosh.New(o)
			Expect(err).To(MatchError(ContainSubstring(problem)))
		},
		Entry("no address", func(o *bosh.Options) { o.Address = "" }, "address is required"),
		Entry("no scheme", func(o *bosh.Options) { o.Address = "127.0.0.1:25555" }, "want https://host:port"),
		Entry("a path", func(o *bosh.Options) { o.Address = "https://127.0.0.1:25555/bosh" }, "must have no path"),
		Entry("no credentials", func(o *bosh.Options) { o.Password = "" }, "a username and password or a UAA client id and secret"),
		Entry("a CA that is not PEM", func(o *bosh.Options) { o.CACert = "not a certificate" }, "ca_cert holds no PEM certificate"),
		Entry("a negative rate", func(o *bosh.Options) { o.RateLimit = -1 }, "must not be negative"),
		Entry("a negative bound", func(o *bosh.Options) { o.MaxInFlight = -1 }, "must not be negative"),
	)

	It("does no network I/O", func() {
		d := startDirector(sim.Options{})
		o := valid()
		o.Address = d.URL()
		_, err := bosh.New(o)
		Expect(err).NotTo(HaveOccurred())
		Consistently(func() map[string]int { return d.Stats().Requests }, 100*time.Millisecond).Should(BeEmpty())
	})

	It("reads /info once, on first use", func() {
		d := startDirector(sim.Options{})
		c := newClient(d)
		ctx := context.Background()
		for range 3 {
			_, err := c.Deployments(ctx)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(d.Stats().Requests).To(HaveKeyWithValue("GET /info", 1))
	})
})
