package sim_test

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// rawGet fetches a path of the simulator and returns the body unparsed.
func rawGet(cc *sim.CC, path, tok string) string {
	GinkgoHelper()
	req, err := http.NewRequest("GET", cc.URL()+path, nil)
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	Expect(res.StatusCode).To(Equal(http.StatusOK), string(raw))
	return string(raw)
}

// inCCOrder is the guids sorted as CC's decorators sort what they include: by (created_at, guid).
func inCCOrder(created map[string]time.Time) []string {
	out := make([]string, 0, len(created))
	for g := range created {
		out = append(out, g)
	}
	slices.SortFunc(out, func(a, b string) int {
		if c := created[a].Compare(created[b]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

func included(body map[string]any, key string) []any {
	GinkgoHelper()
	inc, ok := body["included"].(map[string]any)
	Expect(ok).To(BeTrue(), "no included in %v", body)
	list, ok := inc[key].([]any)
	Expect(ok).To(BeTrue(), "no included.%s in %v", key, inc)
	return list
}

func names(body map[string]any) []string {
	var out []string
	for _, r := range body["resources"].([]any) {
		out = append(out, r.(map[string]any)["name"].(string))
	}
	return out
}

var _ = Describe("the marketplace's queries", func() {
	var (
		f          *fixture
		spaceOffer sim.Offering
		spacePlan  sim.Plan
		spaceBrk   sim.Broker
	)
	BeforeEach(func() {
		f = newFixture()
		var err error
		spaceBrk, err = f.cc.Foundation().AddSpaceBroker("private", f.space1.GUID)
		Expect(err).NotTo(HaveOccurred())
		spaceOffer, err = f.cc.Foundation().AddOffering(spaceBrk.GUID, "kafka", "kafka")
		Expect(err).NotTo(HaveOccurred())
		spacePlan, err = f.cc.Foundation().AddPlan(spaceOffer.GUID, "kafka-one", "one", "")
		Expect(err).NotTo(HaveOccurred())
	})

	DescribeTable("filters plans by visibility: a global broker's plans everywhere, a space-scoped broker's in its space",
		func(query func() string, want func() []string) {
			status, body := get(f.cc, "/v3/service_plans?"+query(), f.tok)
			Expect(status).To(Equal(http.StatusOK), "%v", body)
			Expect(guids(body)).To(Equal(want()))
		},
		Entry("no filter: everything", func() string { return "" },
			func() []string { return []string{f.small.GUID, f.large.GUID, f.otherPlan.GUID, spacePlan.GUID} }),
		Entry("the broker's space", func() string { return "space_guids=" + f.space1.GUID },
			func() []string { return []string{f.small.GUID, f.large.GUID, f.otherPlan.GUID, spacePlan.GUID} }),
		Entry("another space", func() string { return "space_guids=" + f.space2.GUID },
			func() []string { return []string{f.small.GUID, f.large.GUID, f.otherPlan.GUID} }),
		Entry("the broker's org", func() string { return "organization_guids=" + f.org1.GUID },
			func() []string { return []string{f.small.GUID, f.large.GUID, f.otherPlan.GUID, spacePlan.GUID} }),
		Entry("another org", func() string { return "organization_guids=" + f.org2.GUID },
			func() []string { return []string{f.small.GUID, f.large.GUID, f.otherPlan.GUID} }),
		Entry("its space but another org", func() string { return "space_guids=" + f.space1.GUID + "&organization_guids=" + f.org2.GUID },
			func() []string { return []string{f.small.GUID, f.large.GUID, f.otherPlan.GUID} }),
		Entry("available=true", func() string { return "available=true&service_offering_names=redis" },
			func() []string { return []string{f.small.GUID, f.large.GUID} }),
		Entry("available=false: every simulated plan is available", func() string { return "available=false" },
			func() []string { return nil }),
	)

	It("filters offerings by visibility and availability the same way", func() {
		_, body := get(f.cc, "/v3/service_offerings?space_guids="+f.space2.GUID, f.tok)
		Expect(guids(body)).NotTo(ContainElement(spaceOffer.GUID))
		Expect(guids(body)).To(HaveLen(2))
		_, body = get(f.cc, "/v3/service_offerings?space_guids="+f.space1.GUID+"&available=true", f.tok)
		Expect(guids(body)).To(ContainElement(spaceOffer.GUID))
		Expect(guids(body)).To(HaveLen(3))
		_, body = get(f.cc, "/v3/service_offerings?available=false", f.tok)
		Expect(guids(body)).To(BeEmpty())
	})

	It("leaves an offering without plans out once visibility is asked for: it has no public plan", func() {
		bare, err := f.cc.Foundation().AddOffering(f.broker.GUID, "bare", "bare")
		Expect(err).NotTo(HaveOccurred())
		_, body := get(f.cc, "/v3/service_offerings", f.tok)
		Expect(guids(body)).To(ContainElement(bare.GUID))
		_, body = get(f.cc, "/v3/service_offerings?organization_guids="+f.org1.GUID, f.tok)
		Expect(guids(body)).NotTo(ContainElement(bare.GUID))
	})

	It("includes each plan's offering once, presented in full, with include=service_offering", func() {
		_, body := get(f.cc, "/v3/service_plans?include=service_offering&service_broker_names=blacksmith,other", f.tok)
		offerings := included(body, "service_offerings")
		var got []string
		for _, o := range offerings {
			got = append(got, o.(map[string]any)["guid"].(string))
		}
		other := f.otherPlan.OfferingGUID
		Expect(got).To(Equal(inCCOrder(map[string]time.Time{f.offering.GUID: f.offering.CreatedAt, other: offeringCreated(f, other)})))
		redis := offerings[slices.Index(got, f.offering.GUID)].(map[string]any)
		Expect(redis).To(HaveKeyWithValue("name", "redis"))
		Expect(redis).To(HaveKeyWithValue("available", true))
		Expect(redis["broker_catalog"]).To(HaveKeyWithValue("id", "redis"))
		Expect(redis["relationships"]).To(Equal(map[string]any{"service_broker": map[string]any{"data": map[string]any{"guid": f.broker.GUID}}}))
		Expect(redis["links"]).To(HaveKey("service_plans"))
		Expect(body["included"]).NotTo(HaveKey("service_brokers"))
		Expect(pag(body)["first"].(map[string]any)["href"]).To(ContainSubstring("include=service_offering"))
	})

	It("includes the brokers' names and guids only, with fields[service_offering.service_broker]", func() {
		_, body := get(f.cc, "/v3/service_plans?fields[service_offering.service_broker]=name,guid&include=service_offering", f.tok)
		want := inCCOrder(map[string]time.Time{f.broker.GUID: f.broker.CreatedAt, f.otherBroker.GUID: f.otherBroker.CreatedAt,
			spaceBrk.GUID: spaceBrk.CreatedAt})
		brokers := included(body, "service_brokers")
		Expect(brokers).To(HaveLen(3))
		for i, b := range brokers {
			Expect(b).To(HaveLen(2))
			Expect(b).To(HaveKeyWithValue("guid", want[i]))
		}
		Expect(brokers).To(ContainElement(map[string]any{"name": "blacksmith", "guid": f.broker.GUID}))

		raw := rawGet(f.cc, "/v3/service_plans?fields[service_offering.service_broker]=guid,name&include=service_offering&names=small", f.tok)
		Expect(raw).To(ContainSubstring(`"included":{"service_offerings":[{"guid":"` + f.offering.GUID))
		Expect(raw).To(HaveSuffix(`"service_brokers":[{"name":"blacksmith","guid":"` + f.broker.GUID + `"}]}}`))

		_, body = get(f.cc, "/v3/service_plans?fields[service_offering.service_broker]=guid&names=nothing", f.tok)
		Expect(body["included"]).To(Equal(map[string]any{"service_brokers": []any{}}))
	})

	It("includes the space-scoped brokers' spaces and orgs in full with include=space.organization", func() {
		_, body := get(f.cc, "/v3/service_plans?include=space.organization", f.tok)
		Expect(included(body, "spaces")).To(ConsistOf(HaveKeyWithValue("guid", f.space1.GUID)))
		Expect(included(body, "spaces")[0]).To(HaveKeyWithValue("relationships", HaveKey("quota")))
		Expect(included(body, "organizations")).To(ConsistOf(And(HaveKeyWithValue("guid", f.org1.GUID), HaveKeyWithValue("suspended", false))))
		_, body = get(f.cc, "/v3/service_plans?include=space.organization&service_broker_names=blacksmith", f.tok)
		Expect(body["included"]).To(Equal(map[string]any{"spaces": []any{}, "organizations": []any{}}))
	})

	It("includes the offerings' brokers with fields[service_broker] on offerings", func() {
		_, body := get(f.cc, "/v3/service_offerings?fields[service_broker]=guid&names=redis,mysql", f.tok)
		want := inCCOrder(map[string]time.Time{f.broker.GUID: f.broker.CreatedAt, f.otherBroker.GUID: f.otherBroker.CreatedAt})
		Expect(included(body, "service_brokers")).To(Equal([]any{map[string]any{"guid": want[0]}, map[string]any{"guid": want[1]}}))
		_, body = get(f.cc, "/v3/service_offerings", f.tok)
		Expect(body).NotTo(HaveKey("included"))
	})

	It("answers a plan's visibility", func() {
		_, body := get(f.cc, "/v3/service_plans/"+f.small.GUID+"/visibility", f.tok)
		Expect(body).To(Equal(map[string]any{"type": "public"}))
		_, body = get(f.cc, "/v3/service_plans/"+spacePlan.GUID+"/visibility", f.tok)
		Expect(body).To(Equal(map[string]any{"type": "space", "space": map[string]any{"guid": f.space1.GUID, "name": "space-1"}}))
		status, body := get(f.cc, "/v3/service_plans/nope/visibility", f.tok)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(cfError(body)).To(HaveKeyWithValue("detail", "Service plan not found"))
		_, body = get(f.cc, "/v3/service_plans?guids="+spacePlan.GUID, f.tok)
		Expect(body["resources"].([]any)[0]).To(HaveKeyWithValue("visibility_type", "space"))
	})

	DescribeTable("refuses what CC refuses",
		func(path, detail string) {
			status, body := get(f.cc, path, f.tok)
			Expect(status).To(Equal(http.StatusBadRequest))
			Expect(cfError(body)).To(HaveKeyWithValue("detail", "The query parameter is invalid: "+detail))
		},
		Entry("available not a boolean", "/v3/service_plans?available=yes", "Available must be 'true' or 'false'"),
		Entry("available on offerings", "/v3/service_offerings?available=", "Available must be 'true' or 'false'"),
		Entry("an unknown include", "/v3/service_plans?include=service_broker",
			"Invalid included resource: 'service_broker'. Valid included resources are: 'space.organization', 'service_offering'"),
		Entry("an include twice", "/v3/service_plans?include=service_offering,service_offering", "Duplicate included resource: 'service_offering'"),
		Entry("a plan field", "/v3/service_plans?fields[service_offering.service_broker]=url",
			"Fields valid keys for 'service_offering.service_broker' are: 'guid', 'name'"),
		Entry("order_by on instances", "/v3/service_instances?order_by=type", "Order by can only be: 'created_at', 'updated_at', 'name'"),
		Entry("what stays unsimulated", "/v3/service_plans?order_by=name", "'order_by' is not simulated by cf/sim"),
	)
})

func offeringCreated(f *fixture, guid string) time.Time {
	_, body := get(f.cc, "/v3/service_offerings?guids="+guid, f.tok)
	t, err := time.Parse(time.RFC3339, body["resources"].([]any)[0].(map[string]any)["created_at"].(string))
	Expect(err).NotTo(HaveOccurred())
	return t
}

var _ = Describe("the service instances' queries", func() {
	var f *fixture
	BeforeEach(func() { f = newFixture() })

	DescribeTable("orders by order_by, ties by guid, - reversing",
		func(order string, want []string) {
			_, body := get(f.cc, "/v3/service_instances?order_by="+order, f.tok)
			Expect(names(body)).To(Equal(want))
			Expect(pag(body)["first"].(map[string]any)["href"]).To(ContainSubstring("order_by=" + order))
		},
		Entry("name", "name", []string{"one", "three", "two", "ups"}),
		Entry("-name", "-name", []string{"ups", "two", "three", "one"}),
		Entry("created_at (one second: by guid)", "created_at", []string{"one", "two", "three", "ups"}),
		Entry("-created_at", "-created_at", []string{"ups", "three", "two", "one"}),
	)

	It("orders by updated_at", func() {
		// timestamps are whole seconds: update "one" until its updated_at is the latest
		Eventually(func() []string {
			Expect(f.cc.Foundation().SetLastOperation("guid-1", sim.LastOperation{Type: sim.OpUpdate, State: sim.StateSucceeded})).To(Succeed())
			_, body := get(f.cc, "/v3/service_instances?order_by=updated_at", f.tok)
			return names(body)
		}, 3*time.Second, 100*time.Millisecond).Should(Equal([]string{"two", "three", "ups", "one"}))
		_, body := get(f.cc, "/v3/service_instances?order_by=-updated_at", f.tok)
		Expect(names(body)).To(Equal([]string{"one", "ups", "three", "two"}))
	})

	It("includes plans, offerings and brokers with the fields asked, each once, in CC's order", func() {
		raw := rawGet(f.cc, "/v3/service_instances?guids=guid-1,guid-2&fields[service_plan]=name,guid,relationships.service_offering"+
			"&fields[service_plan.service_offering]=guid,tags,name,relationships.service_broker,description,documentation_url"+
			"&fields[service_plan.service_offering.service_broker]=guid,name&fields[space]=name", f.tok)
		plans := inCCOrder(map[string]time.Time{f.small.GUID: f.small.CreatedAt, f.large.GUID: f.large.CreatedAt})
		spaces := inCCOrder(map[string]time.Time{f.space1.GUID: f.space1.CreatedAt, f.space2.GUID: f.space2.CreatedAt})
		spaceName := map[string]string{f.space1.GUID: "space-1", f.space2.GUID: "space-2"}
		planJSON := func(g string) string {
			name := map[string]string{f.small.GUID: "small", f.large.GUID: "large"}[g]
			return `{"guid":"` + g + `","name":"` + name + `","relationships":{"service_offering":{"data":{"guid":"` + f.offering.GUID + `"}}}}`
		}
		Expect(raw).To(HaveSuffix(`"included":{"spaces":[{"name":"` + spaceName[spaces[0]] + `"},{"name":"` + spaceName[spaces[1]] + `"}]` +
			`,"service_plans":[` + planJSON(plans[0]) + `,` + planJSON(plans[1]) + `]` +
			`,"service_offerings":[{"name":"redis","guid":"` + f.offering.GUID + `","description":"redis service","tags":[],"documentation_url":null,` +
			`"relationships":{"service_broker":{"data":{"guid":"` + f.broker.GUID + `"}}}}]` +
			`,"service_brokers":[{"name":"blacksmith","guid":"` + f.broker.GUID + `"}]}}`))
	})

	It("includes only the fields asked for, across instances of several brokers", func() {
		_, body := get(f.cc, "/v3/service_instances?fields[service_plan]=name&fields[service_plan.service_offering.service_broker]=name", f.tok)
		Expect(included(body, "service_plans")).To(ConsistOf(
			map[string]any{"name": "small"}, map[string]any{"name": "large"}, map[string]any{"name": "db"}))
		Expect(included(body, "service_brokers")).To(ConsistOf(map[string]any{"name": "blacksmith"}, map[string]any{"name": "other"}))
		Expect(body["included"]).NotTo(HaveKey("service_offerings"))
	})

	It("includes no plans when the page holds no managed instance, as CC's decorators return early", func() {
		_, body := get(f.cc, "/v3/service_instances?type=user-provided&fields[service_plan]=name", f.tok)
		Expect(body).NotTo(HaveKey("included"))
		_, body = get(f.cc, "/v3/service_instances?type=user-provided&fields[service_plan]=name&fields[space]=guid", f.tok)
		Expect(body["included"]).To(Equal(map[string]any{"spaces": []any{map[string]any{"guid": f.space2.GUID}}}))
	})
})
