package reconciler_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"golang.org/x/sync/errgroup"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
)

// serveParts serves each part (a nil one is none) until ctx ends, as the
// daemon's errgroup does; once every part has returned, the channel
// receives the first error a part returned (nil when none) and is closed.
func serveParts(ctx context.Context, parts ...reconciler.Part) <-chan error {
	g, gctx := errgroup.WithContext(ctx)
	for _, p := range parts {
		if p != nil {
			g.Go(func() error { return p.Serve(gctx) })
		}
	}
	done := make(chan error, 1)
	go func() { done <- g.Wait(); close(done) }()
	return done
}

// runsAndWatch are the lease (with HA), the runs and the watch: the loops a
// spec of the runs serves (the fleet upgrades and the health loop are
// served by the specs about them).
func runsAndWatch(m *reconciler.Manager) []reconciler.Part {
	l := m.Loops()
	return []reconciler.Part{l.Lease, l.Runs, l.Watch}
}

var _ = Describe("the reconciler's loops", func() {
	It("are every part the daemon serves, the lease only with HA, the runs' loop alone when disabled", func() {
		e := newEnv(envOptions{seed: 1})
		l := e.m.Loops()
		Expect(l.Lease).To(BeNil(), "no HA, no lease to keep")
		Expect(l.All()).To(Equal([]reconciler.Part{l.Runs, l.Watch, l.Upgrades, l.Health}))

		ha := e.newManagerWith(func(o *reconciler.Options) {
			o.HA = &reconciler.HAOptions{Leases: e.store.Leases, ID: "daemon-a", TTL: 3 * time.Second}
		}).Loops()
		Expect(ha.Lease).NotTo(BeNil())
		Expect(ha.All()).To(Equal([]reconciler.Part{ha.Lease, ha.Runs, ha.Watch, ha.Upgrades, ha.Health}))

		off := newEnv(envOptions{seed: 1, config: func(c *config.ReconcilerConfig) { c.Enabled = false }}).m.Loops()
		Expect(off.All()).To(Equal([]reconciler.Part{off.Runs}))
	})

	It("refuses the lease and the runs served twice at once, and serves them again once stopped", func() {
		e := newEnv(envOptions{seed: 1})
		m := e.newManagerWith(func(o *reconciler.Options) {
			o.HA = &reconciler.HAOptions{Leases: e.store.Leases, ID: "daemon-a", TTL: 3 * time.Second}
		})
		l := m.Loops()
		for _, c := range []struct {
			part    reconciler.Part
			with    reconciler.Part // served beside it: the runs run while leading
			serving func() bool
		}{
			{l.Lease, nil, func() bool { return m.Status().Leader }},
			{l.Runs, l.Lease, func() bool { return m.Status().LastRun != nil }},
		} {
			ctx, cancel := context.WithCancel(context.Background())
			first := serveParts(ctx, c.with, c.part)
			Eventually(c.serving).WithTimeout(20 * time.Second).Should(BeTrue())
			Expect(<-serveParts(context.Background(), c.part)).To(MatchError(reconciler.ErrAlreadyStarted))
			cancel()
			Eventually(first).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
			ctx, cancel = context.WithCancel(context.Background())
			again := serveParts(ctx, c.part)
			cancel()
			Eventually(again).WithTimeout(10 * time.Second).Should(Receive(BeNil()))
		}
	})
})
