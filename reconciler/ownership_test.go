package reconciler_test

import (
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// tenantID is tenant A's instance, which the broker provisioned.
const tenantID = "6f1e2d3c-4b5a-4978-8a9b-0c1d2e3f4a5b"

// provisioned writes the records the broker writes for an instance it
// provisioned on director ("" with one Director): its owned index record
// and the manifest it rendered; the deployment runs it.
func (e *env) provisioned(id, director string, on *sim.Director) (name, manifest string) {
	GinkgoHelper()
	name, manifest = vault.DeploymentName("redis-small", id), claimingManifest(vault.DeploymentName("redis-small", id), id)
	Expect(on.PutDeployment(manifest)).To(Succeed())
	e.putRecord(id, &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: name, Director: director,
		Created: time.Now().Add(-time.Hour).Unix(), OrganizationGUID: "org-a", SpaceGUID: "space-a",
		LastOperation: &vault.Operation{Type: "provision", State: vault.OperationSucceeded}})
	Expect(e.store.PutManifest(ctx(), id, manifest)).To(Succeed())
	return name, manifest
}

// The trust boundary: a record the broker made names its deployment and
// Director, and nothing a Director lists moves it.
var _ = Describe("an instance the broker owns", func() {
	It("stays on its own Director's deployment when another Director lists a deployment of its name", func() {
		e := newEnv(envOptions{})
		west, err := sim.New(sim.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(west.Close()).To(Succeed()) })
		westClient, err := bosh.New(bosh.Options{Name: "west", Address: west.URL(), Username: sim.DefaultUsername, Password: sim.DefaultPassword})
		Expect(err).NotTo(HaveOccurred())
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			o.Directors = []ports.NamedDirector{{Name: "east", Director: e.bosh, Tasks: e.bosh},
				{Name: "west", Director: westClient, Tasks: westClient, Deployer: westClient}}
			o.Registerer = e.reg
		})
		name, manifest := e.provisioned(tenantID, "west", west)
		s := e.run(report.RunOptions{})
		Expect(s.Conflicts).To(BeEmpty())
		Expect(e.index()[tenantID]).To(And(HaveField("Director", "west"), HaveField("Adopted", false)))

		// Anyone who can deploy on east, the first Director, puts a deployment of the same name there.
		hostile := strings.Replace(manifest, "instances: 1", "instances: 2", 1)
		Expect(e.sim.PutDeployment(hostile)).To(Succeed())
		s = e.run(report.RunOptions{Force: true})
		want := report.Conflict{InstanceID: tenantID, Winner: name, Loser: name, LoserDirector: "east"}
		Expect(s.Conflicts).To(ConsistOf(want))
		Expect(e.m.Status().Conflicts).To(ConsistOf(want))
		Expect(counter(e.reg, "blacksmith_reconciler_conflicts", nil)).To(Equal(1.0))
		Expect(s.Drift).To(BeZero(), "east's manifest is not the instance's: no drift recorded")
		rec := e.index()[tenantID]
		Expect(rec).To(And(HaveField("Director", "west"), HaveField("DeploymentName", name), HaveField("Orphaned", false)))
		stored, _, err := e.store.Manifest(ctx(), tenantID)
		Expect(err).NotTo(HaveOccurred())
		Expect(stored).To(Equal(manifest), "the broker's manifest stays")
		events, err := e.store.Events(ctx(), tenantID, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(events).To(ContainElement(And(HaveField("Kind", "conflict"), HaveField("Details", HaveKeyWithValue("loser_director", "east")))))

		// Its own deployment goes: an orphan, whatever east lists.
		west.RemoveDeployment(name)
		s = e.run(report.RunOptions{Force: true})
		Expect(s.Orphaned).To(Equal(1))
		Expect(e.index()[tenantID]).To(And(HaveField("Orphaned", true), HaveField("Director", "west"), HaveField("DeploymentName", name)))
	})

	It("is an orphan once its deployment is gone, whatever deployment's properties.blacksmith names it", func() {
		e := newEnv(envOptions{})
		name, manifest := e.provisioned(tenantID, "", e.sim)
		Expect(e.run(report.RunOptions{}).Conflicts).To(BeEmpty())

		e.sim.RemoveDeployment(name)
		Expect(e.sim.PutDeployment(claimingManifest("zzz-attacker", tenantID))).To(Succeed())
		s := e.run(report.RunOptions{Force: true})
		Expect(s.Conflicts).To(ConsistOf(report.Conflict{InstanceID: tenantID, Winner: name, Loser: "zzz-attacker"}))
		Expect(s.Orphaned).To(Equal(1))
		Expect(e.index()[tenantID]).To(And(HaveField("DeploymentName", name), HaveField("Orphaned", true)))
		stored, _, err := e.store.Manifest(ctx(), tenantID)
		Expect(err).NotTo(HaveOccurred())
		Expect(stored).To(Equal(manifest), "the attacker's manifest is never recorded as the instance's")
		Expect(e.m.Status().Unmatched).To(ContainElement(And(HaveField("Deployment", "zzz-attacker"),
			HaveField("Reason", ContainSubstring("which its record names")))))
	})

	It("leaves a deployment nobody owns to adoption: a record marked adopted until an operator confirms it", func() {
		e := newEnv(envOptions{seed: 1})
		e.run(report.RunOptions{})
		rec := e.index()[instanceID(e.names[0])]
		Expect(rec.Adopted).To(BeTrue())
		Expect(rec.AdoptedAt).NotTo(BeEmpty())
	})
})
