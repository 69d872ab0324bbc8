package reconciler_test

import (
	"context"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("rebuilding the index from BOSH and the per-instance documents", func() {
	It("recreates every record, the orphan's too, and a dry run writes nothing", func() {
		e := newEnv(envOptions{seed: 3})
		ctx := context.Background()
		Expect(e.run(report.RunOptions{}).Created).To(Equal(3))
		before := e.index()
		gone := e.names[1]
		goneID := instanceID(gone)
		// A backup holds the broker's fields of the instance that will lose its deployment.
		rec := before[goneID]
		rec.OrganizationGUID = "org-1"
		_, err := e.store.Update(ctx, map[string]vault.Change{goneID: func(*vault.Record) (*vault.Record, error) { return rec, nil }})
		Expect(err).NotTo(HaveOccurred())
		_, err = e.store.Backup(ctx, goneID)
		Expect(err).NotTo(HaveOccurred())
		e.sim.RemoveDeployment(gone)
		e.wipeIndex()

		writes := e.vaultWrites()
		dry, err := e.m.RebuildIndex(ctx, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(dry.Applied).To(BeFalse())
		Expect(dry.Run.Plan.Creates).To(HaveLen(2))
		Expect(dry.Orphans).To(ConsistOf(reconciler.RebuiltOrphan{InstanceID: goneID, Deployment: gone,
			ServiceID: rec.ServiceID, PlanID: rec.PlanID, Source: "backup"}))
		Expect(dry.Unrecoverable).To(BeEmpty())
		Expect(e.index()).To(BeEmpty(), "a dry run writes no record")
		Expect(e.vaultWrites()).To(Equal(writes), "nor anything else")

		rep, err := e.m.RebuildIndex(ctx, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Orphans).To(HaveLen(1))
		idx := e.index()
		Expect(idx).To(HaveLen(3))
		Expect(idx[goneID].Orphaned).To(BeTrue())
		Expect(idx[goneID].OrganizationGUID).To(Equal("org-1"), "broker fields from the backup")
		for _, name := range []string{e.names[0], e.names[2]} {
			Expect(idx[instanceID(name)].PlanID).To(Equal(before[instanceID(name)].PlanID))
			Expect(idx[instanceID(name)].Orphaned).To(BeFalse())
		}
		again, err := e.m.RebuildIndex(ctx, true)
		Expect(err).NotTo(HaveOccurred())
		Expect(again.Orphans).To(BeEmpty(), "idempotent: the records exist now")
	})
})
