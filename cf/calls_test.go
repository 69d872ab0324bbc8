package cf_test

import (
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

const listKey = "GET /v3/service_instances"

var _ = Describe("reading a broker's view", func() {
	var (
		cc *sim.CC
		c  *cf.Client
	)
	BeforeEach(func() {
		cc = startCC(sim.Options{})
		c = newClient(cc.URL())
	})

	It("reads the broker, its plans and its managed instances with their space and org", func() {
		seeded, err := cc.Foundation().Seed("blacksmith", 7)
		Expect(err).NotTo(HaveOccurred())
		// Another broker's instance and a user-provided instance are not listed.
		other := cc.Foundation().AddBroker("other")
		o, _ := cc.Foundation().AddOffering(other.GUID, "mysql", "mysql")
		p, _ := cc.Foundation().AddPlan(o.GUID, "mysql-db", "db", "2.0.0")
		org := cc.Foundation().AddOrg("org-2")
		sp, _ := cc.Foundation().AddSpace(org.GUID, "space-2")
		_, err = cc.Foundation().AddInstance("", "db-1", p.GUID, sp.GUID, sim.LastOperation{Type: sim.OpCreate, State: sim.StateSucceeded})
		Expect(err).NotTo(HaveOccurred())
		_, err = cc.Foundation().AddUserProvidedInstance("", "ups", seeded[0].SpaceGUID)
		Expect(err).NotTo(HaveOccurred())
		Expect(cc.Foundation().SetLastOperation(seeded[1].GUID, sim.LastOperation{Type: sim.OpUpdate, State: sim.StateInProgress, Description: "updating"})).To(Succeed())

		b, err := c.ServiceBroker(ctxFor(5*time.Second), "blacksmith")
		Expect(err).NotTo(HaveOccurred())
		Expect(b.Name).To(Equal("blacksmith"))
		Expect(b.GUID).NotTo(BeEmpty())

		plans, err := c.ServicePlans(ctxFor(5*time.Second), "blacksmith")
		Expect(err).NotTo(HaveOccurred())
		Expect(plans).To(HaveLen(3))
		var catalogIDs []string
		for _, p := range plans {
			catalogIDs = append(catalogIDs, p.CatalogID)
			Expect(p.MaintenanceVersion).To(Equal("1.0.0"))
			Expect(p.OfferingGUID).NotTo(BeEmpty())
		}
		Expect(catalogIDs).To(ConsistOf("redis-small", "redis-large", "postgresql-small"))

		instances, err := c.ServiceInstances(ctxFor(5*time.Second), planGUIDs(c, "blacksmith"))
		Expect(err).NotTo(HaveOccurred())
		Expect(instances).To(HaveLen(7))
		byGUID := map[string]cf.Instance{}
		for _, in := range instances {
			byGUID[in.GUID] = in
			Expect(in.SpaceName).To(Equal("seed-space"))
			Expect(in.OrgName).To(Equal("seed-org"))
			Expect(in.OrgGUID).NotTo(BeEmpty())
		}
		first := byGUID[seeded[0].GUID]
		Expect(first.Name).To(Equal(seeded[0].Name))
		Expect(first.PlanGUID).To(Equal(seeded[0].PlanGUID))
		Expect(first.LastOperation.Type).To(Equal("create"))
		Expect(first.LastOperation.State).To(Equal("succeeded"))
		Expect(first.LastOperation.UpdatedAt).NotTo(BeZero())
		Expect(byGUID[seeded[1].GUID].LastOperation).To(MatchFields2("update", "in progress", "updating"))

		one, err := c.ServiceInstance(ctxFor(5*time.Second), seeded[1].GUID)
		Expect(err).NotTo(HaveOccurred())
		Expect(one.GUID).To(Equal(seeded[1].GUID))
		Expect(one.SpaceGUID).To(Equal(seeded[1].SpaceGUID))
		Expect(one.LastOperation.State).To(Equal("in progress"))
	})

	It("says ErrNotFound for a broker that is not registered and for an instance that is gone", func() {
		seeded, err := cc.Foundation().Seed("blacksmith", 1)
		Expect(err).NotTo(HaveOccurred())
		_, err = c.ServiceBroker(ctxFor(5*time.Second), "nope")
		Expect(err).To(MatchError(cf.ErrNotFound))

		Expect(cc.Foundation().RemoveInstance(seeded[0].GUID)).To(BeTrue())
		_, err = c.ServiceInstance(ctxFor(5*time.Second), seeded[0].GUID)
		Expect(err).To(MatchError(cf.ErrNotFound))
		Expect(err).NotTo(MatchError(cf.ErrUnavailable))
		var api *cf.APIError
		Expect(errors.As(err, &api)).To(BeTrue())
		Expect(api.Status).To(Equal(404))
		Expect(api.Code).To(Equal(cf.CodeResourceNotFound))
		Expect(api.Title).To(Equal("CF-ResourceNotFound"))
		Expect(api.Detail).To(Equal("Service instance not found"))
	})

	It("reads 12,001 instances in 3 requests at per_page 5000", func() {
		seeded, err := cc.Foundation().Seed("blacksmith", 12001)
		Expect(err).NotTo(HaveOccurred())
		plans := planGUIDs(c, "blacksmith")
		cc.ResetStats()
		instances, err := c.ServiceInstances(ctxFor(60*time.Second), plans)
		Expect(err).NotTo(HaveOccurred())
		Expect(instances).To(HaveLen(12001))
		seen := map[string]bool{}
		for _, in := range instances {
			seen[in.GUID] = true
		}
		Expect(seen).To(HaveLen(12001))
		Expect(seen).To(HaveKey(seeded[12000].GUID))
		Expect(cc.Stats().Requests[listKey]).To(Equal(3))
	})

	It("asks nothing for no plans", func() {
		instances, err := c.ServiceInstances(ctxFor(5*time.Second), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(instances).To(BeEmpty())
		Expect(cc.Stats().Requests).To(BeEmpty())
	})
})

// MatchFields2 matches a LastOperation's type, state and description.
func MatchFields2(typ, state, description string) OmegaMatcher {
	return WithTransform(func(op cf.LastOperation) []string { return []string{op.Type, op.State, op.Description} },
		Equal([]string{typ, state, description}))
}
