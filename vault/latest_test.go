package vault_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("LatestBackupRecord", func() {
	for _, version := range []int{1, 2} {
		It(fmt.Sprintf("reads the record of the newest backup on KV v%d, nil when there is none", version), func() {
			s, _ := newStore(server(), version)
			got, backup, err := s.Archive.LatestBackupRecord(ctx, "lbr-1")
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(BeNil())
			Expect(backup).To(BeEmpty())

			first := rec("svc", "plan-a")
			first.OrganizationGUID = "org-1"
			_, err = s.Update(ctx, map[string]vault.Change{"lbr-1": put(first)})
			Expect(err).NotTo(HaveOccurred())
			taken, err := s.Backup(ctx, "lbr-1")
			Expect(err).NotTo(HaveOccurred())
			got, backup, err = s.Archive.LatestBackupRecord(ctx, "lbr-1")
			Expect(err).NotTo(HaveOccurred())
			Expect(backup).To(Equal(taken))
			Expect(got.PlanID).To(Equal("plan-a"))
			Expect(got.OrganizationGUID).To(Equal("org-1"))

			Expect(s.Indexes.Remove(ctx, "lbr-1")).To(Succeed()) // backs up again: the record is still there
			Expect(s.PutManifest(ctx, "lbr-1", "name: x\n")).To(Succeed())
			newest, err := s.Backup(ctx, "lbr-1") // a backup without a record
			Expect(err).NotTo(HaveOccurred())
			got, backup, err = s.Archive.LatestBackupRecord(ctx, "lbr-1")
			Expect(err).NotTo(HaveOccurred())
			Expect(backup).To(Equal(newest))
			Expect(got).To(BeNil(), "the newest backup holds no record")
		})
	}
})
