package reconciler_test

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
)

// A fleet upgrade's journal (blacksmith/state/upgrades) is the leader's:
// a daemon that loses the lease while an instance's deploy runs must not
// write over what the new leader keeps there; the entry it leaves is
// finished by the new leader's next fleet upgrade.
var _ = Describe("a fleet upgrade on a daemon that loses the lease", func() {
	It("writes no more of the journal once another daemon leads", func() {
		ctx := context.Background()
		f := newFleet(1, nil)
		f.use(upgradeCatalog("2.0.0", "16.2.0"), func(o *reconciler.Options) {
			o.HA = &reconciler.HAOptions{Leases: f.e.store.Leases, ID: "vm-b", TTL: 900 * time.Millisecond}
		})
		f.e.sim.Knobs().SetTaskDuration(3 * time.Second) // the deploy outlasts the lease
		journal := func() string {
			var doc json.RawMessage
			_, err := f.e.store.State.ReadState(ctx, "upgrades", &doc)
			Expect(err).NotTo(HaveOccurred())
			return string(doc)
		}
		done := make(chan error, 1)
		go func() { _, err := f.m.Upgrades().Run(ctx, reconciler.UpgradeRequest{}); done <- err }()
		Eventually(journal, 10*time.Second, 20*time.Millisecond).Should(ContainSubstring(f.ids[0]), "the deploy under way")

		// vm-a takes the lease, as if vm-b's had run out, and leads.
		_, err := f.e.store.Leases.AcquireLease(ctx, "reconciler", "vm-a", 2*time.Hour, time.Now().Add(time.Hour))
		Expect(err).NotTo(HaveOccurred())
		kept := journal()
		Eventually(done, 20*time.Second).Should(Receive(Succeed()))
		Expect(journal()).To(Equal(kept), "the journal as the new leader found it: vm-b's end of the upgrade not written")
		Expect(kept).To(ContainSubstring(f.ids[0]), "the entry left for the new leader's fleet upgrade")

		// Leading again, its next fleet upgrade finishes the entry left.
		Expect(f.e.store.Leases.ReleaseLease(ctx, "reconciler", "vm-a")).To(Succeed())
		_, err = f.m.Upgrades().Run(ctx, reconciler.UpgradeRequest{})
		Expect(err).NotTo(HaveOccurred())
		Expect(journal()).NotTo(ContainSubstring(f.ids[0]))
	})
})
