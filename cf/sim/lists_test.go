package sim_test

import (
	"net/http"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the lists", func() {
	var f *fixture
	BeforeEach(func() { f = newFixture() })

	It("lists brokers by name", func() {
		status, body := get(f.cc, "/v3/service_brokers?names=blacksmith", f.tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(guids(body)).To(Equal([]string{f.broker.GUID}))
		b := body["resources"].([]any)[0].(map[string]any)
		Expect(b).To(HaveKeyWithValue("name", "blacksmith"))
		Expect(b).To(HaveKeyWithValue("relationships", map[string]any{}))
		Expect(b["links"]).To(HaveKeyWithValue("self", map[string]any{"href": f.cc.URL() + "/v3/service_brokers/" + f.broker.GUID}))
	})

	It("lists offerings by broker name or guid", func() {
		_, body := get(f.cc, "/v3/service_offerings?service_broker_names=blacksmith", f.tok)
		Expect(guids(body)).To(Equal([]string{f.offering.GUID}))
		o := body["resources"].([]any)[0].(map[string]any)
		Expect(o["broker_catalog"]).To(HaveKeyWithValue("id", "redis"))
		Expect(o["relationships"]).To(Equal(map[string]any{"service_broker": map[string]any{"data": map[string]any{"guid": f.broker.GUID}}}))
		_, body = get(f.cc, "/v3/service_offerings?service_broker_guids="+f.otherBroker.GUID, f.tok)
		Expect(guids(body)).To(HaveLen(1))
		Expect(guids(body)).NotTo(ContainElement(f.offering.GUID))
	})

	It("lists plans by broker, offering and catalog id", func() {
		_, body := get(f.cc, "/v3/service_plans?service_broker_names=blacksmith", f.tok)
		Expect(guids(body)).To(Equal([]string{f.small.GUID, f.large.GUID}))
		p := body["resources"].([]any)[0].(map[string]any)
		Expect(p["broker_catalog"]).To(HaveKeyWithValue("id", "redis-small"))
		Expect(p["broker_catalog"]).To(HaveKeyWithValue("maximum_polling_duration", BeNil()))
		Expect(p["maintenance_info"]).To(Equal(map[string]any{"version": "1.0.0"}))
		Expect(p["relationships"]).To(HaveKeyWithValue("service_offering", map[string]any{"data": map[string]any{"guid": f.offering.GUID}}))

		_, body = get(f.cc, "/v3/service_plans?service_broker_guids="+f.broker.GUID+"&broker_catalog_ids=redis-large", f.tok)
		Expect(guids(body)).To(Equal([]string{f.large.GUID}))
		_, body = get(f.cc, "/v3/service_plans?service_offering_guids="+f.offering.GUID, f.tok)
		Expect(guids(body)).To(Equal([]string{f.small.GUID, f.large.GUID}))
	})

	DescribeTable("lists instances by filter",
		func(query func(*fixture) string, want func(*fixture) []string) {
			status, body := get(f.cc, "/v3/service_instances?"+query(f), f.tok)
			Expect(status).To(Equal(http.StatusOK), "%v", body)
			Expect(guids(body)).To(Equal(want(f)))
			Expect(pag(body)["total_results"]).To(BeNumerically("==", len(want(f))))
		},
		Entry("none", func(*fixture) string { return "" },
			func(f *fixture) []string { return []string{"guid-1", "guid-2", "guid-3", "guid-ups"} }),
		Entry("plans (comma-separated)", func(f *fixture) string { return "service_plan_guids=" + f.small.GUID + "," + f.large.GUID },
			func(*fixture) []string { return []string{"guid-1", "guid-2"} }),
		Entry("managed", func(*fixture) string { return "type=managed" },
			func(*fixture) []string { return []string{"guid-1", "guid-2", "guid-3"} }),
		Entry("user-provided", func(*fixture) string { return "type=user-provided" },
			func(*fixture) []string { return []string{"guid-ups"} }),
		Entry("guids", func(*fixture) string { return "guids=guid-3,guid-1,nope" },
			func(*fixture) []string { return []string{"guid-1", "guid-3"} }),
		Entry("names", func(*fixture) string { return "names=two" }, func(*fixture) []string { return []string{"guid-2"} }),
		Entry("spaces", func(f *fixture) string { return "space_guids=" + f.space2.GUID },
			func(*fixture) []string { return []string{"guid-2", "guid-ups"} }),
		Entry("orgs and type", func(f *fixture) string { return "organization_guids=" + f.org1.GUID + "&type=managed" },
			func(*fixture) []string { return []string{"guid-1", "guid-3"} }),
		Entry("nothing matches", func(*fixture) string { return "names=" }, func(*fixture) []string { return nil }),
	)

	It("presents an instance with its last operation, maintenance info and relationships", func() {
		status, body := get(f.cc, "/v3/service_instances/guid-2", f.tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(HaveKeyWithValue("type", "managed"))
		Expect(body).To(HaveKeyWithValue("upgrade_available", false))
		Expect(body).To(HaveKeyWithValue("maintenance_info", map[string]any{}))
		Expect(body).To(HaveKeyWithValue("dashboard_url", BeNil()))
		lo := body["last_operation"].(map[string]any)
		Expect(lo).To(HaveKeyWithValue("type", "update"))
		Expect(lo).To(HaveKeyWithValue("state", "in progress"))
		Expect(lo).To(HaveKeyWithValue("description", "upgrading"))
		Expect(lo).To(HaveKey("created_at"))
		Expect(lo).To(HaveKey("updated_at"))
		Expect(body["relationships"]).To(Equal(map[string]any{
			"space":        map[string]any{"data": map[string]any{"guid": f.space2.GUID}},
			"service_plan": map[string]any{"data": map[string]any{"guid": f.large.GUID}},
		}))

		Expect(f.cc.Foundation().SetInstanceMaintenanceVersion("guid-1", "0.9.0")).To(Succeed())
		_, body = get(f.cc, "/v3/service_instances/guid-1", f.tok)
		Expect(body).To(HaveKeyWithValue("upgrade_available", true))
	})

	It("follows SetLastOperation and RemoveInstance, answering 404 CF-ResourceNotFound once gone", func() {
		Expect(f.cc.Foundation().SetLastOperation("guid-1", sim.LastOperation{Type: "delete", State: "failed", Description: "boom"})).To(Succeed())
		_, body := get(f.cc, "/v3/service_instances?guids=guid-1", f.tok)
		Expect(body["resources"].([]any)[0].(map[string]any)["last_operation"]).To(HaveKeyWithValue("state", "failed"))

		Expect(f.cc.Foundation().RemoveInstance("guid-1")).To(BeTrue())
		status, body := get(f.cc, "/v3/service_instances/guid-1", f.tok)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(cfError(body)).To(Equal(map[string]any{"code": 10010.0, "title": "CF-ResourceNotFound", "detail": "Service instance not found"}))
		Expect(f.cc.Foundation().SetLastOperation("guid-1", sim.LastOperation{})).To(MatchError(sim.ErrNotFound))
	})

	It("includes spaces and organizations when fields ask for them", func() {
		_, body := get(f.cc, "/v3/service_instances?type=managed&fields[space]=name,guid,relationships.organization&fields[space.organization]=name,guid", f.tok)
		inc := body["included"].(map[string]any)
		Expect(inc["spaces"]).To(ConsistOf(
			map[string]any{"guid": f.space1.GUID, "name": "space-1", "relationships": map[string]any{"organization": map[string]any{"data": map[string]any{"guid": f.org1.GUID}}}},
			map[string]any{"guid": f.space2.GUID, "name": "space-2", "relationships": map[string]any{"organization": map[string]any{"data": map[string]any{"guid": f.org2.GUID}}}},
		))
		Expect(inc["organizations"]).To(ConsistOf(
			map[string]any{"guid": f.org1.GUID, "name": "org-1"}, map[string]any{"guid": f.org2.GUID, "name": "org-2"}))
		Expect(pag(body)["first"].(map[string]any)["href"]).To(ContainSubstring("fields%5Bspace%5D=name%2Cguid%2Crelationships.organization"))

		_, body = get(f.cc, "/v3/service_instances", f.tok)
		Expect(body).NotTo(HaveKey("included"))
	})
})
