package reconciler_test

import (
	"context"
	"errors"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/lease"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("several daemons on one Vault (HA)", func() {
	const ttl = 900 * time.Millisecond

	// daemon starts a manager with the lease kept through leases; it runs
	// until the spec ends or stop is called.
	type daemon struct {
		m    *reconciler.Manager
		stop func()
	}
	start := func(e *env, id string, leases lease.Store) *daemon {
		GinkgoHelper()
		e.cfg.Interval = 300 * time.Millisecond
		m := e.newManagerWith(func(o *reconciler.Options) {
			o.Config.Interval = 300 * time.Millisecond
			o.HA = &reconciler.HAOptions{Leases: leases, ID: id, TTL: ttl}
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := serveParts(ctx, runsAndWatch(m)...)
		d := &daemon{m: m, stop: func() { cancel(); <-done }}
		DeferCleanup(d.stop)
		return d
	}
	leaders := func(ds ...*daemon) []string {
		var out []string
		for _, d := range ds {
			if st := d.m.Status(); st.Leader {
				out = append(out, st.LeaderID)
			}
		}
		return out
	}

	It("run the reconciler on one of them at a time; a follower hands forced runs to the leader's name; the lease moves at once on a clean stop", func() {
		e := newEnv(envOptions{seed: 3})
		a := start(e, "vm-a", e.store.Leases)
		Eventually(func() []string { return leaders(a) }).Should(Equal([]string{"vm-a"}))
		b := start(e, "vm-b", e.store.Leases)
		c := start(e, "vm-c", e.store.Leases)

		e.sim.ResetStats()
		Consistently(func() []string { return leaders(a, b, c) }, 2*time.Second, 100*time.Millisecond).Should(Equal([]string{"vm-a"}))
		listings := e.sim.Stats().Requests["GET /deployments"]
		Expect(listings).To(BeNumerically(">=", 3), "the leader runs every interval")
		Expect(listings).To(BeNumerically("<=", 9), "one daemon lists, not three (2 s at a 300 ms interval)")

		since := time.Now()
		Eventually(func() bool {
			l := b.m.Status().LastRun // b never ran: a last run is the leader's, from the run log
			return l != nil && l.StartedAt.After(since)
		}, 3*time.Second).Should(BeTrue(), "a follower's status follows the leader's runs")

		_, _, err := b.m.Trigger(report.RunOptions{Force: true})
		var nl *reconciler.NotLeaderError
		Expect(errors.As(err, &nl)).To(BeTrue())
		Expect(nl.Leader).To(Equal("vm-a"))
		Expect(b.m.Status()).To(And(HaveField("Leader", false), HaveField("LeaderID", "vm-a")))

		stopped := time.Now()
		a.stop()
		Eventually(func() int { return len(leaders(b, c)) }, 2*time.Second, 20*time.Millisecond).Should(Equal(1))
		Expect(time.Since(stopped)).To(BeNumerically("<", ttl), "released on stop: no wait for the lease to expire")
	})

	It("stop writing the moment they lose the lease (fencing): a leader cut off from the lease makes no write", func() {
		e := newEnv(envOptions{seed: 3, proxy: true})
		leases, err := vault.New(context.Background(), vault.Options{Address: e.proxy.URL, Token: vaultServer.Token, Mount: e.mount})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(leases.Close)
		a := start(e, "vm-a", leases.Leases)
		Eventually(func() bool { return a.m.Status().Leader }).Should(BeTrue())
		// Wait for the first run to end before reading the index: a read while the very
		// first write of a fresh mount is half-way sees shards without the layout (refused).
		Eventually(func() *report.Summary { return a.m.Status().LastRun }).ShouldNot(BeNil())
		Expect(e.index()).To(HaveLen(3), "the leader reconciles")

		e.proxy.failWrites("/blacksmith/leases/", -1) // renewals fail from now on: as if paused, or cut off
		Eventually(func() bool { return a.m.Status().Leader }, 2*ttl, 20*time.Millisecond).Should(BeFalse())
		e.sim.PutDeployment(strings.TrimRight(e.manifest(e.names[0]), "\n") + "\ntags:\n  fenced: \"yes\"\n")
		writes := e.vaultWrites()
		// A run asked for now is refused at once (the e2e pause spec shows a run
		// already going stopping at its next write).
		_, err = a.m.RunOnce(context.Background(), report.RunOptions{Force: true})
		Expect(err).To(MatchError(reconciler.ErrNotLeader))
		Expect(e.vaultWrites()).To(Equal(writes), "no write after the lease is lost")
	})

	It("let only the leader roll back or run once: a follower answers NotLeaderError; a command that runs once takes the lease for its run and gives it back", func() {
		e := newEnv(envOptions{seed: 3})
		a := start(e, "vm-a", e.store.Leases)
		Eventually(func() []string { return leaders(a) }).Should(Equal([]string{"vm-a"}))
		Eventually(func() *report.Summary { return a.m.Status().LastRun }).ShouldNot(BeNil())
		b := start(e, "vm-b", e.store.Leases)
		Eventually(func() string { return b.m.Status().LeaderID }).Should(Equal("vm-a"))

		id := instanceID(e.names[0])
		_, err := b.m.Rollback(context.Background(), id, "", false)
		var nl *reconciler.NotLeaderError
		Expect(errors.As(err, &nl)).To(BeTrue(), "%v", err)
		Expect(nl.Leader).To(Equal("vm-a"))

		// A one-shot command (blacksmith reconcile) beside a running leader is refused, writing nothing.
		oneShot := e.newManagerWith(func(o *reconciler.Options) {
			o.HA = &reconciler.HAOptions{Leases: e.store.Leases, ID: "cli", TTL: ttl}
		})
		writes := e.vaultWrites()
		_, err = oneShot.RunOnce(context.Background(), report.RunOptions{Force: true})
		Expect(err).To(MatchError(reconciler.ErrNotLeader))
		Expect(e.vaultWrites()).To(Equal(writes))
		s, err := oneShot.RunOnce(context.Background(), report.RunOptions{DryRun: true})
		Expect(err).NotTo(HaveOccurred(), "a dry run writes nothing: it needs no lease")
		Expect(s.DryRun).To(BeTrue())

		// With no daemon leading, it takes the lease, runs, and gives the lease back at once.
		a.stop()
		b.stop()
		_, err = oneShot.RunOnce(context.Background(), report.RunOptions{Force: true})
		Expect(err).NotTo(HaveOccurred())
		l, ok, err := e.store.Leases.ReadLease(context.Background(), "reconciler")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok && l.Holder == "cli" && l.Expires.After(time.Now())).To(BeFalse(), "released after the run: %+v", l)
	})
})
