package lease_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/lease"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("a lease holder", func() {
	var store *vault.Store
	BeforeEach(func() { store = newStore() })

	It("holds the lease alone, renews it past its TTL, and gives it up at once", func() {
		a := lease.New(store.Leases, "op", "vm-a", 600*time.Millisecond, nil, logger())
		b := lease.New(store.Leases, "op", "vm-b", 600*time.Millisecond, nil, logger())
		Expect(a.Acquire(ctx)).To(Succeed())
		Expect(a.Holds()).To(BeTrue())
		a.Keep(ctx)
		Consistently(func() error { return b.Acquire(ctx) }, 1500*time.Millisecond, 100*time.Millisecond).
			Should(MatchError(vault.ErrLeaseHeld), "renewed every TTL/3: never free for another")
		Expect(b.Seen().Holder).To(Equal("vm-a"))
		Expect(a.Holds()).To(BeTrue())

		released, err := a.Release()
		Expect(err).NotTo(HaveOccurred())
		Expect(released).To(BeTrue())
		Expect(a.Holds()).To(BeFalse())
		Expect(b.Acquire(ctx)).To(Succeed(), "free at once, without waiting for the TTL")
	})

	It("waits for a lease another holder gives up, and gives up waiting after the wait", func() {
		a := lease.New(store.Leases, "op", "vm-a", 10*time.Second, nil, logger())
		b := lease.New(store.Leases, "op", "vm-b", 10*time.Second, nil, logger())
		Expect(a.Acquire(ctx)).To(Succeed())
		start := time.Now()
		Expect(b.AcquireWithin(ctx, 300*time.Millisecond, retry.Backoff{})).To(MatchError(vault.ErrLeaseHeld))
		Expect(time.Since(start)).To(BeNumerically(">=", 300*time.Millisecond))

		// a gives the lease up once b has found it held and waits to try again.
		waiting := make(chan struct{}, 1)
		backoff := retry.Backoff{Base: 25 * time.Millisecond, Limit: 250 * time.Millisecond, Rand: func() float64 {
			select {
			case waiting <- struct{}{}:
			default:
			}
			return 1
		}}
		releasing := make(chan struct{})
		go func() {
			defer GinkgoRecover()
			<-waiting
			close(releasing)
			_, err := a.Release()
			Expect(err).NotTo(HaveOccurred())
		}()
		Expect(b.AcquireWithin(ctx, 10*time.Second, backoff)).To(Succeed())
		Expect(releasing).To(BeClosed(), "taken only once a gave it up")
		Expect(b.Holds()).To(BeTrue())
	})

	It("knows it lost the lease once it ran out unrenewed, and tells when a renewal finds it taken over", func() {
		a := lease.New(store.Leases, "op", "vm-a", 600*time.Millisecond, nil, logger())
		Expect(a.Acquire(ctx)).To(Succeed())
		Eventually(a.Holds, time.Second, 20*time.Millisecond).Should(BeFalse(), "TTL less a sixth, on its own clock")

		b := lease.New(store.Leases, "op", "vm-b", time.Minute, nil, logger())
		Eventually(func() error { return b.Acquire(ctx) }, 2*time.Second, 50*time.Millisecond).Should(Succeed())
		a.Keep(ctx)
		Eventually(a.Lost(), time.Second).Should(BeClosed())
		released, err := a.Release()
		Expect(err).NotTo(HaveOccurred())
		Expect(released).To(BeFalse(), "not its lease: nothing released")
		got, ok, err := store.Leases.ReadLease(ctx, "op")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(got.Holder).To(Equal("vm-b"))
	})
})

var _ = Describe("a lease holder's renewals", func() {
	It("tell each loss on a channel of their own, however often the lease is kept and lost", func() {
		store := newStore()
		a := lease.New(store.Leases, "op", "vm-a", 300*time.Millisecond, nil, logger())
		for round := range 2 {
			other := lease.New(store.Leases, "op", "vm-other", time.Minute, nil, logger())
			Expect(a.Acquire(ctx)).To(Succeed(), "round %d", round)
			Eventually(a.Holds, time.Second, 20*time.Millisecond).Should(BeFalse())
			Eventually(func() error { return other.Acquire(ctx) }, 2*time.Second, 50*time.Millisecond).Should(Succeed())
			a.Keep(ctx)
			Eventually(a.Lost(), time.Second).Should(BeClosed())
			_, err := a.Release()
			Expect(err).NotTo(HaveOccurred())
			_, err = other.Release()
			Expect(err).NotTo(HaveOccurred())
		}
	})

	It("stop waiting when the caller's context ends, with its error", func() {
		store := newStore()
		a := lease.New(store.Leases, "op", "vm-a", time.Minute, nil, logger())
		Expect(a.Acquire(ctx)).To(Succeed())
		b := lease.New(store.Leases, "op", "vm-b", time.Minute, nil, logger())
		cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		defer cancel()
		err := b.AcquireWithin(cctx, 10*time.Second, retry.Backoff{})
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(err).NotTo(MatchError(vault.ErrLeaseHeld), "not another holder's: the caller gave up")
	})
})
