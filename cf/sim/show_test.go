package sim_test

import (
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// What `cf services` and `cf service NAME` read after the instances.
var _ = Describe("an instance's details, as cf service reads them", func() {
	var f *fixture
	BeforeEach(func() { f = newFixture() })

	It("lists no credential binding (the simulator holds none), with the includes asked for", func() {
		status, body := get(f.cc, "/v3/service_credential_bindings?include=app&service_instance_guids="+f.i1.GUID+"&type=app", f.tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body["resources"]).To(BeEmpty())
		Expect(pag(body)["total_results"]).To(BeEquivalentTo(0))
		Expect(body["included"]).To(Equal(map[string]any{"apps": []any{}}))
		status, body = get(f.cc, "/v3/service_credential_bindings?type=managed", f.tok)
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(cfError(body)["detail"]).To(ContainSubstring("Type must be one of 'app', 'key'"))
		status, body = get(f.cc, "/v3/service_credential_bindings?include=space", f.tok)
		Expect(status).To(Equal(http.StatusBadRequest))
		Expect(cfError(body)["detail"]).To(ContainSubstring("Invalid included resource: 'space'"))
	})

	It("reads a feature flag at its default, and says an unknown one is not found", func() {
		status, body := get(f.cc, "/v3/feature_flags/service_instance_sharing", f.tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(Equal(map[string]any{"name": "service_instance_sharing", "enabled": false, "updated_at": nil,
			"custom_error_message": nil, "links": map[string]any{"self": map[string]any{"href": f.cc.URL() + "/v3/feature_flags/service_instance_sharing"}}}))
		status, body = get(f.cc, "/v3/feature_flags/no_such_flag", f.tok)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(cfError(body)["detail"]).To(Equal("Feature flag not found"))
		hidden := start(sim.Options{HideMarketplace: true})
		_, body = get(hidden, "/v3/feature_flags/hide_marketplace_from_unauthenticated_users", mustToken(hidden))
		Expect(body["enabled"]).To(BeTrue(), "the option is the flag")
	})

	It("gets an offering and a plan by guid", func() {
		status, body := get(f.cc, "/v3/service_offerings/"+f.offering.GUID, f.tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body["name"]).To(Equal("redis"))
		status, body = get(f.cc, "/v3/service_plans/"+f.small.GUID, "")
		Expect(status).To(Equal(http.StatusOK), "the marketplace answers without a token")
		Expect(body["name"]).To(Equal("small"))
		status, body = get(f.cc, "/v3/service_plans/nope", f.tok)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(cfError(body)["detail"]).To(Equal("Service plan not found"))
	})

	It("says an instance is shared with no space", func() {
		status, body := get(f.cc, "/v3/service_instances/"+f.i1.GUID+"/relationships/shared_spaces?fields%5Bspace%5D=guid,name", f.tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body["data"]).To(BeEmpty())
		Expect(body["included"]).To(Equal(map[string]any{"spaces": []any{}}))
		status, _ = get(f.cc, "/v3/service_instances/nope/relationships/shared_spaces", f.tok)
		Expect(status).To(Equal(http.StatusNotFound))
	})
})
