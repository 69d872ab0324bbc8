package bosh_test

import (
	"context"
	"net"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("Transient", func() {
	It("tells the Director's faults (5xx, 429, no answer) from its answers about the request and from a caller that gave up", func() {
		d := startDirector(sim.Options{})
		c := newClient(d)
		ctx := context.Background()
		Expect(d.PutDeployment(manifest("t-1"))).To(Succeed())

		Expect(d.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name/vms", Status: http.StatusServiceUnavailable})).To(Succeed())
		_, err := c.VMs(ctx, "t-1")
		Expect(bosh.Transient(err)).To(BeTrue(), "503: %v", err)
		d.Faults().Clear()
		Expect(d.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name/vms", Status: http.StatusTooManyRequests})).To(Succeed())
		_, err = c.VMs(ctx, "t-1")
		Expect(bosh.Transient(err)).To(BeTrue(), "429: %v", err)
		d.Faults().Clear()

		_, err = c.VMs(ctx, "nope")
		Expect(err).To(MatchError(bosh.ErrDeploymentNotFound))
		Expect(bosh.Transient(err)).To(BeFalse(), "404 is an answer")

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		addr := ln.Addr().String()
		Expect(ln.Close()).To(Succeed())
		refused := newClient(d, func(o *bosh.Options) { o.Address = "https://" + addr; o.Timeout = 2 * time.Second })
		_, err = refused.VMs(ctx, "t-1")
		Expect(err).To(HaveOccurred())
		Expect(bosh.Transient(err)).To(BeTrue(), "refused: %v", err)

		gone, cancel := context.WithCancel(ctx)
		cancel()
		_, err = c.VMs(gone, "t-1")
		Expect(err).To(HaveOccurred())
		Expect(bosh.Transient(err)).To(BeFalse(), "the caller gave up: %v", err)
		Expect(bosh.Transient(nil)).To(BeFalse())
	})
})
