package sim_test

import (
	"net/http"
	"net/url"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

var _ = Describe("pagination", func() {
	It("walks 12,001 instances at per_page 5000 in 3 pages by the next links, keeping the query", func() {
		cc := start(sim.Options{})
		seeded, err := cc.Foundation().Seed("blacksmith", 12001)
		Expect(err).NotTo(HaveOccurred())
		tok := mustToken(cc)
		_, plans := get(cc, "/v3/service_plans?service_broker_names=blacksmith", tok)
		planGUIDs := guids(plans)
		Expect(planGUIDs).To(HaveLen(3))

		next := cc.URL() + "/v3/service_instances?type=managed&per_page=5000&service_plan_guids=" + planGUIDs[0] + "," + planGUIDs[1] + "," + planGUIDs[2]
		var seen []string
		pages := 0
		for next != "" {
			status, body := get(cc, next, tok)
			Expect(status).To(Equal(http.StatusOK), "%v", body)
			pages++
			p := pag(body)
			Expect(p["total_results"]).To(BeNumerically("==", 12001))
			Expect(p["total_pages"]).To(BeNumerically("==", 3))
			Expect(p["first"].(map[string]any)["href"]).To(HavePrefix(cc.URL() + "/v3/service_instances?"))
			u, err := url.Parse(p["last"].(map[string]any)["href"].(string))
			Expect(err).NotTo(HaveOccurred())
			Expect(u.Query().Get("page")).To(Equal("3"))
			Expect(u.Query().Get("per_page")).To(Equal("5000"))
			Expect(u.Query().Get("type")).To(Equal("managed"))
			Expect(u.Query().Get("service_plan_guids")).To(Equal(planGUIDs[0] + "," + planGUIDs[1] + "," + planGUIDs[2]))
			if pages == 1 {
				Expect(p["previous"]).To(BeNil())
			} else {
				Expect(p["previous"]).NotTo(BeNil())
			}
			seen = append(seen, guids(body)...)
			next = ""
			if n, ok := p["next"].(map[string]any); ok {
				next = n["href"].(string)
			}
		}
		Expect(pages).To(Equal(3))
		Expect(seen).To(HaveLen(12001))
		Expect(seen[12000]).To(Equal(seeded[12000].GUID))
	})

	It("defaults to 50 per page and answers an empty page past the end", func() {
		cc := start(sim.Options{})
		_, err := cc.Foundation().Seed("b", 120)
		Expect(err).NotTo(HaveOccurred())
		tok := mustToken(cc)
		_, body := get(cc, "/v3/service_instances", tok)
		Expect(guids(body)).To(HaveLen(50))
		Expect(pag(body)["total_pages"]).To(BeNumerically("==", 3))
		Expect(pag(body)["first"]).To(Equal(map[string]any{"href": cc.URL() + "/v3/service_instances?page=1&per_page=50"}))

		_, body = get(cc, "/v3/service_instances?page=9", tok)
		Expect(body["resources"]).To(BeEmpty())
		Expect(pag(body)["next"]).To(BeNil())
		Expect(pag(body)["previous"]).To(Equal(map[string]any{"href": cc.URL() + "/v3/service_instances?page=8&per_page=50"}))

		_, body = get(cc, "/v3/service_brokers?names=nobody", tok)
		Expect(pag(body)["total_pages"]).To(BeNumerically("==", 1))
		Expect(pag(body)["last"]).To(Equal(map[string]any{"href": cc.URL() + "/v3/service_brokers?names=nobody&page=1&per_page=50"}))
	})

	DescribeTable("refuses bad query parameters with CC's CF-BadQueryParameter detail",
		func(path, detail string) {
			cc := start(sim.Options{})
			status, body := get(cc, path, mustToken(cc))
			Expect(status).To(Equal(http.StatusBadRequest))
			Expect(cfError(body)).To(Equal(map[string]any{"code": 10005.0, "title": "CF-BadQueryParameter",
				"detail": "The query parameter is invalid: " + detail}))
		},
		Entry("per_page 0", "/v3/service_instances?per_page=0", "Per page must be a positive integer"),
		Entry("per_page 5001", "/v3/service_instances?per_page=5001", "Per page must be between 1 and 5000"),
		Entry("per_page text", "/v3/service_plans?per_page=lots", "Per page must be a positive integer"),
		Entry("page 0", "/v3/service_brokers?page=0", "Page must be a positive integer"),
		Entry("page empty", "/v3/service_offerings?page=", "Page must be a positive integer"),
		Entry("both", "/v3/service_instances?page=-1&per_page=9999", "Page must be a positive integer, Per page must be between 1 and 5000"),
		Entry("unknown filter", "/v3/service_brokers?fruit=apple",
			"Unknown query parameter(s): 'fruit'. Valid parameters are: 'page', 'per_page', 'order_by', 'created_ats', 'updated_ats', 'guids', 'space_guids', 'names', 'label_selector'"),
		Entry("bad type", "/v3/service_instances?type=mine", "Type must be one of 'managed', 'user-provided'"),
		Entry("fields not an object", "/v3/service_instances?fields=space", "Fields must be an object"),
		Entry("fields bad key", "/v3/service_instances?fields[space]=colour", "Fields valid keys for 'space' are: 'guid', 'name', 'relationships.organization'"),
	)

	It("accepts per_page with trailing text as Ruby's to_i does", func() {
		cc := start(sim.Options{})
		status, body := get(cc, "/v3/service_instances?per_page=7abc", mustToken(cc))
		Expect(status).To(Equal(http.StatusOK))
		Expect(pag(body)["first"].(map[string]any)["href"]).To(HaveSuffix("per_page=7"))
	})
})
