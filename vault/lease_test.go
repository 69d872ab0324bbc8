package vault_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Leases", func() {
	var store *vault.Store
	BeforeEach(func() { store, _ = newStore(server(), 2) })
	t0 := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

	It("give one holder at a time the lease until it expires; renewals keep its start and raise its token", func() {
		a, err := store.Leases.AcquireLease(ctx, "reconciler", "vm-a", 30*time.Second, t0)
		Expect(err).NotTo(HaveOccurred())
		Expect(a).To(And(HaveField("Holder", "vm-a"), HaveField("Since", t0), HaveField("Expires", t0.Add(30*time.Second))))

		_, err = store.Leases.AcquireLease(ctx, "reconciler", "vm-b", 30*time.Second, t0.Add(10*time.Second))
		var held *vault.LeaseHeldError
		Expect(errors.As(err, &held)).To(BeTrue())
		Expect(held.Holder).To(Equal("vm-a"))
		Expect(err).To(MatchError(vault.ErrLeaseHeld))

		renewed, err := store.Leases.AcquireLease(ctx, "reconciler", "vm-a", 30*time.Second, t0.Add(20*time.Second))
		Expect(err).NotTo(HaveOccurred())
		Expect(renewed.Since).To(Equal(t0))
		Expect(renewed.Token).To(BeNumerically(">", a.Token))

		b, err := store.Leases.AcquireLease(ctx, "reconciler", "vm-b", 30*time.Second, t0.Add(51*time.Second))
		Expect(err).NotTo(HaveOccurred(), "expired: taken over")
		Expect(b.Token).To(BeNumerically(">", renewed.Token))
		Expect(store.Leases.ReleaseLease(ctx, "reconciler", "vm-a")).To(Succeed(), "not its lease any more: nothing done")
		got, ok, err := store.Leases.ReadLease(ctx, "reconciler")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(got.Holder).To(Equal("vm-b"))

		Expect(store.Leases.ReleaseLease(ctx, "reconciler", "vm-b")).To(Succeed())
		_, err = store.Leases.AcquireLease(ctx, "reconciler", "vm-a", 30*time.Second, t0.Add(52*time.Second))
		Expect(err).NotTo(HaveOccurred(), "released: taken at once")
	})

	It("go to exactly one of several holders racing for it", func() {
		var wg sync.WaitGroup
		var mu sync.Mutex
		winners := 0
		for i := range 6 {
			wg.Go(func() {
				defer GinkgoRecover()
				_, err := store.Leases.AcquireLease(ctx, "race", fmt.Sprintf("vm-%d", i), time.Minute, t0)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					winners++
				} else {
					Expect(err).To(MatchError(vault.ErrLeaseHeld))
				}
			})
		}
		wg.Wait()
		Expect(winners).To(Equal(1))
	})

	It("need check-and-set: KV v1 is refused, as are bad names and holders", func() {
		v1, _ := newStore(server(), 1)
		_, err := v1.Leases.AcquireLease(ctx, "reconciler", "vm-a", time.Minute, t0)
		Expect(err).To(MatchError(vault.ErrNoCAS))
		_, err = store.Leases.AcquireLease(ctx, "../x", "vm-a", time.Minute, t0)
		Expect(err).To(MatchError(vault.ErrInvalid))
		_, err = store.Leases.AcquireLease(ctx, "reconciler", "", time.Minute, t0)
		Expect(err).To(MatchError(vault.ErrInvalid))
	})
})

var _ = Describe("The index of a fresh mount", func() {
	It("reads as empty or whole while its first record is written, never as damaged", func() {
		for range 5 {
			store, _ := newStore(server(), 2)
			var wg sync.WaitGroup
			stop := make(chan struct{})
			errs := make(chan error, 100)
			var reads atomic.Int64 // indexes read whole
			for range 4 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := store.Index(ctx); err != nil {
							errs <- err
							return
						}
						reads.Add(1)
					}
				})
			}
			// read is the count of indexes read so far; a reader's error ends the wait at once.
			read := func() int64 {
				if len(errs) > 0 {
					StopTrying("a reader failed").Now()
				}
				return reads.Load()
			}
			Eventually(read).WithTimeout(10*time.Second).Should(BeNumerically(">=", 4), "the readers read before the write")
			_, err := store.Update(ctx, map[string]vault.Change{"first": func(*vault.Record) (*vault.Record, error) {
				return &vault.Record{ServiceID: "s", PlanID: "p"}, nil
			}})
			Expect(err).NotTo(HaveOccurred())
			written := reads.Load()
			Eventually(func() int64 { return read() - written }).WithTimeout(10*time.Second).Should(BeNumerically(">=", 4),
				"the readers read on after the write")
			close(stop)
			wg.Wait()
			close(errs)
			Expect(errs).To(BeEmpty())
		}
	})
})
