package reconciler_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// movedCatalog is redis-small at version, deploying release on network
// (upgradeTemplate's, moved).
func movedCatalog(version, release, network string) *catalog.Catalog {
	GinkgoHelper()
	tpl, err := catalog.ParseTemplate("manifest.yml", strings.Replace(upgradeTemplate(release).Text(),
		"networks: [{name: services}]", "networks: [{name: "+network+"}]", 1))
	Expect(err).NotTo(HaveOccurred())
	cat := upgradeCatalog(version, release)
	cat.Services[0].Plans[0].Manifest = tpl
	return cat
}

var _ = Describe("a fleet upgrade through the change guard", func() {
	It("skips, never fails, an upgrade whose templates move the network; upgrades it once the operator allows it, recording so", func() {
		f := newFleet(2, nil)
		f.use(movedCatalog("1.1.0", "16.2.0", "default"), nil)
		rep := f.upgrade(reconciler.UpgradeRequest{Canaries: intp(1)})
		for _, r := range rep.Instances {
			Expect(r.State).To(Equal(report.UpgradeSkipped), r.Reason)
			Expect(r.Reason).To(ContainSubstring("network at instance_groups/redis/networks"))
			Expect(r.Reason).To(ContainSubstring("--allow"))
			Expect(f.running(r.InstanceID)).To(ContainSubstring("name: services"), "nothing deployed")
		}
		Expect(rep.Stopped).To(BeEmpty(), "a refusal is no failed canary")
		Expect(eventKinds(f.ids[0], f.e.store)).To(ContainElement("refused"))
		status, err := f.m.Upgrades().Status(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(status.Quarantined).To(BeEmpty(), "nothing set aside")

		// An operator's allowance for one instance lets that one through.
		_, err = f.m.AllowChanges(context.Background(), f.ids[1], []operation.Class{operation.Network}, time.Hour, "spec")
		Expect(err).NotTo(HaveOccurred())
		rep = f.upgrade(reconciler.UpgradeRequest{})
		Expect(states(rep)).To(Equal(map[string]string{f.ids[0]: report.UpgradeSkipped, f.ids[1]: report.UpgradeUpgraded}))
		Expect(eventKinds(f.ids[1], f.e.store)).To(ContainElement("changes_allowed"))
		_, err = f.m.AllowChanges(context.Background(), f.ids[1], []operation.Class{"everything"}, time.Hour, "spec")
		Expect(err).To(MatchError(ContainSubstring(`"everything" is not a class of guarded change`)))

		rep = f.upgrade(reconciler.UpgradeRequest{Allow: []operation.Class{operation.Network}})
		Expect(rep.Allow).To(Equal([]string{"network"}))
		for _, r := range rep.Instances {
			Expect(r.State).To(Equal(report.UpgradeUpgraded), r.Reason)
			Expect(f.running(r.InstanceID)).To(ContainSubstring("name: default"))
		}
		events, err := f.e.store.Events(context.Background(), f.ids[0], 0)
		Expect(err).NotTo(HaveOccurred())
		last := events[len(events)-1]
		for _, ev := range events {
			if ev.Kind == "upgraded" {
				last = ev
			}
		}
		Expect(last.Kind).To(Equal("upgraded"))
		Expect(last.Details).To(HaveKeyWithValue("allowed", ContainSubstring("network at instance_groups/redis/networks")))
		Expect(last.Details).To(HaveKeyWithValue("diff_releases", "redis"))
	})

	It("upgrades an instance whose password is the configuration server's, keeping the variable, generating none", func() {
		f := newFleet(0, nil)
		const id = "0c0c0c0c-0000-4000-8000-00000000000c"
		name := f.deployment(id)
		legacy := strings.NewReplacer("name: ignored", "name: "+name, "{{ .Secrets.password }}", "((redis_password))").
			Replace(upgradeTemplate("16.1.0").Text())
		ctx := context.Background()
		task, err := f.e.bosh.Deploy(ctx, []byte(legacy))
		Expect(err).NotTo(HaveOccurred())
		_, err = f.e.bosh.WaitTask(ctx, task.ID, 20*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		running := f.running(id)
		Expect(f.e.store.PutManifest(ctx, id, running)).To(Succeed())
		_, err = f.e.store.Update(ctx, map[string]vault.Change{id: func(*vault.Record) (*vault.Record, error) {
			return &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: name, MaintenanceVersion: "1.0.0",
				OrganizationGUID: "org", SpaceGUID: "space"}, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		f.use(upgradeCatalog("1.1.0", "16.2.0"), nil)
		rep := f.upgrade(reconciler.UpgradeRequest{})
		Expect(rep.Instances).To(HaveLen(1))
		Expect(rep.Instances[0].State).To(Equal(report.UpgradeUpgraded), rep.Instances[0].Reason)
		after := f.running(id)
		Expect(after).To(ContainSubstring("((redis_password))"))
		Expect(after).To(ContainSubstring("16.2.0"))
		Expect(after).NotTo(ContainSubstring("secret-not-held"))
		_, stored, err := f.e.store.Secret(ctx, id+"/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(stored).To(BeFalse())
		backup, ok, err := f.e.store.Archive.BackupManifest(ctx, id, rep.Instances[0].Backup)
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(backup).To(Equal(running), "the backup holds what the upgrade replaced")
	})
})
