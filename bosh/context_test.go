package bosh_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("Contexts and redirects", func() {
	It("returns at once with context.Canceled for a cancelled context", func() {
		d := startDirector(sim.Options{})
		c := newClient(d)
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.Deployments(cancelled)
		Expect(err).To(MatchError(context.Canceled))
		_, err = c.Deploy(cancelled, []byte(manifest("never")))
		Expect(err).To(MatchError(context.Canceled))
		Expect(d.Stats().Tasks).To(BeZero())
	})

	It("gives up a slow request when its deadline passes", func() {
		d := startDirector(sim.Options{Latency: 5 * time.Second})
		c := newClient(d)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := c.Info(ctx)
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(time.Since(start)).To(BeNumerically("<", 2*time.Second))
	})

	It("gives up a UAA token request when the context is cancelled", func() {
		d := startDirector(sim.Options{Auth: sim.AuthUAA})
		c := newClient(d)
		_, err := c.Info(ctxFor(10 * time.Second)) // warm up: detection is done, no token yet
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Faults().Inject(sim.Failure{Endpoint: "POST /oauth/token", Delay: 5 * time.Second, Count: 1})).To(Succeed())
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		_, err = c.Deployments(ctx)
		Expect(err).To(MatchError(context.Canceled))
		Expect(time.Since(start)).To(BeNumerically("<", 2*time.Second))
	})

	DescribeTable("follows a task redirect to a host it cannot reach by asking the configured address",
		func(external string) {
			d := startDirector(sim.Options{ExternalHost: external, Auth: sim.AuthUAA, TLS: true})
			c := newClient(d)
			ctx := ctxFor(10 * time.Second)
			task, err := c.Deploy(ctx, []byte(manifest("redis-r")))
			Expect(err).NotTo(HaveOccurred())
			Expect(task.ID).To(BeNumerically(">", 0))
			Expect(task.Deployment).To(Equal("redis-r"))
			Expect(d.Stats().Requests).To(HaveKeyWithValue("GET /tasks/:id", 1), "the task was read from the configured address, with credentials")

			del, err := c.DeleteDeployment(ctx, "redis-r", false)
			Expect(err).NotTo(HaveOccurred())
			Expect(del.Description).To(Equal("delete deployment redis-r"))
		},
		Entry("a loopback address nothing listens on", "127.0.0.2:25555"),
		Entry("a name under .invalid", "director.bosh.invalid:25555"),
	)
})
