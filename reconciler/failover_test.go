package reconciler_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultcluster"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultserver"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// A run through a Vault cluster's balancer while the active node is killed:
// Vault's own failover, which the store rides out (vault.Options.FailoverWait),
// is not an outage for the run's breaker; a failover longer than the store
// waits is one, and the run's policy holds: it stops part-way naming Vault,
// keeps what it wrote, and the next run goes on. Longer specs (a cluster
// started, an election): BLACKSMITH_CLUSTER_SPECS=all runs them.
var _ = Describe("a reconciler run during a Vault leader change", Ordered, func() {
	const seeded = 300
	var c *vaultcluster.Cluster

	BeforeAll(func() {
		if os.Getenv("BLACKSMITH_CLUSTER_SPECS") != "all" {
			Skip("a longer cluster spec: BLACKSMITH_CLUSTER_SPECS=all runs it")
		}
		start, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var err error
		c, err = vaultcluster.Start(start, vaultcluster.Options{})
		if (errors.Is(err, vaultserver.ErrNoBinary) || errors.Is(err, vaultcluster.ErrNoConfigMode)) && !testvault.InCI() {
			Skip(err.Error())
		}
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(c.Close)
	})

	// onCluster is an env of seeded deployments whose reconciler writes to
	// a fresh KV mount of the cluster through its balancer, the store
	// waiting failoverWait (negative: not at all) for a failover to end.
	onCluster := func(failoverWait time.Duration) *env {
		GinkgoHelper()
		e := newEnv(envOptions{seed: seeded, config: func(cfg *config.ReconcilerConfig) {
			cfg.RetryAttempts, cfg.RetryDelay, cfg.MaxConcurrency, cfg.BatchSize = 3, 200*time.Millisecond, 5, 20
		}})
		e.sim.Knobs().SetLatency(30 * time.Millisecond) // a run of some seconds: the kill lands in it
		mount := fmt.Sprintf("failover%d", mounts.Add(1))
		code, body, err := c.Do(context.Background(), c.Addr(), "POST", "/v1/sys/mounts/"+mount, `{"type":"kv","options":{"version":"2"}}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(204), string(body))
		e.store, err = vault.New(context.Background(), vault.Options{Address: c.Addr(), Token: c.Token, Mount: mount,
			FailoverWait: failoverWait, Logger: testLogger()})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(e.store.Close)
		e.mount = mount
		e.m = e.newManager()
		return e
	}

	// runKilling makes a run and kills the cluster's active node (kill -9)
	// once the run has fetched 60 manifests; it returns the run's summary
	// and error once the cluster has elected another node and the killed
	// one is started again.
	runKilling := func(e *env) (report.Summary, error) {
		GinkgoHelper()
		active, err := c.Active(context.Background())
		Expect(err).NotTo(HaveOccurred())
		switches := c.Balancer.Switches()
		killed := make(chan struct{})
		at := 0 // manifests fetched when the node was killed
		go func() {
			defer GinkgoRecover()
			defer close(killed)
			Eventually(func() int { return e.sim.Stats().Requests["GET /deployments/:name"] }).
				WithTimeout(time.Minute).WithPolling(5 * time.Millisecond).Should(BeNumerically(">=", 60))
			active.Kill()
			at = e.sim.Stats().Requests["GET /deployments/:name"]
		}()
		s, err := e.m.RunOnce(context.Background(), report.RunOptions{Reason: "spec: the active Vault node killed"})
		<-killed
		GinkgoWriter.Printf("killed the active node %d manifests in; run: %s in %s, error %v; summary errors %v\n",
			at, s.Result, s.Duration, err, s.Errors)
		Expect(at).To(BeNumerically("<", seeded), "the kill landed in the run")
		Eventually(func() error { _, err := c.Active(context.Background()); return err }).
			WithTimeout(time.Minute).WithPolling(250 * time.Millisecond).Should(Succeed())
		Eventually(c.Balancer.Switches).WithTimeout(30*time.Second).WithPolling(100*time.Millisecond).
			Should(BeNumerically(">", switches), "the balancer moved to the newly elected node")
		restart, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		Expect(c.Restart(restart, active)).To(Succeed())
		return s, err
	}

	// expectNextRunGoesOn makes the run after the failover and expects it to
	// complete with every seeded deployment recorded.
	expectNextRunGoesOn := func(e *env) {
		GinkgoHelper()
		next := e.run(report.RunOptions{Reason: "spec: the run after the failover"})
		Expect(next.Result).To(Equal("success"), "%v", next.Errors)
		Expect(e.index()).To(HaveLen(seeded), "every seeded deployment recorded once the cluster has a leader")
	}

	It("rides out the election: the Vault breaker does not trip, the run completes, the next run goes on", func() {
		e := onCluster(0) // vault.DefaultFailoverWait
		s, err := runKilling(e)
		Expect(errors.Is(err, reconciler.ErrCircuitOpen)).To(BeFalse(), "a failover the store rides out is no outage for the breaker: %v", err)
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Errors).NotTo(ContainElement(ContainSubstring("circuit open")))
		Expect(s.Result).To(Equal("success"), "every item written through the election (a write that landed as the node went away is read again: %v)", s.Errors)
		Expect(s.Created).To(Equal(seeded))
		expectNextRunGoesOn(e)
	})

	It("without the wait, stops part-way naming Vault, keeps what it wrote, and the next run goes on", func() {
		e := onCluster(-1)
		s, err := runKilling(e)
		Expect(err).To(MatchError(reconciler.ErrCircuitOpen), "the election's failures in a row open the Vault breaker")
		Expect(err.Error()).To(ContainSubstring("vault: 20 requests in a row failed"))
		Expect(s.Result).To(Equal("failure"))
		Expect(s.NewlyQuarantined).To(BeEmpty(), "a run stopped by an outage quarantines nothing")
		Expect(e.m.Status().LastRun.Blockers).To(ContainElement(ContainSubstring("the run did not complete")))
		expectNextRunGoesOn(e)
	})
})
