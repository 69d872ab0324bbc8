package lease_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/lease"
	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultcluster"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultserver"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// contest is two daemons' holders of one lease on a Vault cluster: a holds
// it and keeps renewing it, b tries to take it every 100ms (and keeps it
// once it has it), and a watcher looks every 2ms whether both hold it.
type contest struct {
	a, b  *lease.Holder
	both  atomic.Int64 // looks that found both holding
	bHeld atomic.Bool  // b took the lease at least once
	stop  chan struct{}
	wg    sync.WaitGroup
}

// clusterStore is a daemon's own store on the cluster, through the
// balancer, each request bounded to 5s (a request to a frozen node ends).
func clusterStore(c *vaultcluster.Cluster) *vault.Store {
	GinkgoHelper()
	s, err := vault.New(ctx, vault.Options{Address: c.Addr(), Token: c.Token, Timeout: 5 * time.Second, Logger: logger()})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Close)
	return s
}

// startContest starts the contest for lease name with ttl.
func startContest(c *vaultcluster.Cluster, name string, ttl time.Duration) *contest {
	GinkgoHelper()
	k := &contest{
		a:    lease.New(clusterStore(c).Leases, name, "vm-a", ttl, nil, logger()),
		b:    lease.New(clusterStore(c).Leases, name, "vm-b", ttl, nil, logger()),
		stop: make(chan struct{}),
	}
	Expect(k.a.Acquire(ctx)).To(Succeed())
	k.a.Keep(ctx)
	k.wg.Add(2)
	go func() {
		defer k.wg.Done()
		for {
			select {
			case <-k.stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if k.a.Holds() && k.b.Holds() {
				k.both.Add(1)
			}
		}
	}()
	go func() {
		defer k.wg.Done()
		for {
			select {
			case <-k.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			if k.b.Holds() {
				continue
			}
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			if k.b.Acquire(actx) == nil {
				k.bHeld.Store(true)
				k.b.Keep(ctx)
			}
			cancel()
		}
	}()
	DeferCleanup(k.finish)
	return k
}

// finish stops b's tries and the watcher, and both holders' renewals.
func (k *contest) finish() {
	select {
	case <-k.stop:
		return
	default:
	}
	close(k.stop)
	k.wg.Wait()
	_, _ = k.a.Release()
	_, _ = k.b.Release()
}

var _ = Describe("a lease on a Vault cluster with Raft storage", Ordered, func() {
	var c *vaultcluster.Cluster

	BeforeAll(func() {
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

	It("is held by one daemon at a time while the active node is frozen past the lease, and its holder knows it lost it", func(sctx SpecContext) {
		const ttl = 3 * time.Second
		k := startContest(c, "frozen", ttl)
		active, err := c.Active(sctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(active.Stop()).To(Succeed())
		DeferCleanup(func() { _ = active.Cont() })
		Eventually(k.a.Holds).WithTimeout(ttl).Should(BeFalse(), "a's renewals hang on the frozen node: its own clock says the lease ran out")
		Eventually(k.bHeld.Load).WithTimeout(time.Minute).Should(BeTrue(), "b takes the lease once it expired, on the new active node")
		Expect(active.Cont()).To(Succeed())
		Eventually(k.a.Lost()).WithTimeout(time.Minute).Should(BeClosed(), "a's next renewal finds b holding it")
		Expect(k.a.Holds()).To(BeFalse())
		k.finish()
		Expect(k.both.Load()).To(BeZero(), "two daemons never held the lease at once")
	}, SpecTimeout(3*time.Minute))

	It("stays with its holder across the kill of the active node, never held by two", func(sctx SpecContext) {
		if os.Getenv("BLACKSMITH_CLUSTER_SPECS") != "all" {
			Skip("a longer cluster spec: BLACKSMITH_CLUSTER_SPECS=all runs it")
		}
		const ttl = 10 * time.Second
		_, err := c.WaitActive(sctx)
		Expect(err).NotTo(HaveOccurred())
		k := startContest(c, "killed", ttl)
		active, err := c.Active(sctx)
		Expect(err).NotTo(HaveOccurred())
		active.Kill()
		Eventually(func() bool { n, err := c.Active(sctx); return err == nil && n != active }).WithTimeout(time.Minute).Should(BeTrue())
		Consistently(k.a.Holds).WithTimeout(ttl).Should(BeTrue(), "a's renewals go on through the new active node")
		Expect(k.a.Lost()).NotTo(BeClosed())
		k.finish()
		Expect(k.bHeld.Load()).To(BeFalse())
		Expect(k.both.Load()).To(BeZero())
	}, SpecTimeout(3*time.Minute))
})
