package sim_test

import (
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// visibilityCall sends method to a plan's visibility route with body and
// returns the status and the JSON answer.
func visibilityCall(cc *sim.CC, tok, method, path, body string) (int, map[string]any) {
	GinkgoHelper()
	req, err := http.NewRequest(method, cc.URL()+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	return do(req)
}

// orgNames are the names of a visibility answer's organizations.
func orgNames(body map[string]any) []string {
	var out []string
	list, _ := body["organizations"].([]any)
	for _, o := range list {
		out = append(out, o.(map[string]any)["name"].(string))
	}
	return out
}

var _ = Describe("plan visibility writes, as service_plan_visibility_controller", func() {
	var (
		cc          *sim.CC
		tok, path   string
		plan        sim.Plan
		alpha, beta sim.Org
	)
	BeforeEach(func() {
		cc = start(sim.Options{})
		tok = mustToken(cc)
		_, err := cc.Foundation().Seed("blacksmith", 0)
		Expect(err).NotTo(HaveOccurred())
		plan = cc.Foundation().Plans()[0]
		path = "/v3/service_plans/" + plan.GUID + "/visibility"
		alpha, beta = cc.Foundation().AddOrg("alpha"), cc.Foundation().AddOrg("beta")
	})

	It("replaces with PATCH, adds with POST, removes one org with DELETE, and the plan's visibility_type follows", func() {
		status, body := visibilityCall(cc, tok, "PATCH", path, `{"type":"admin"}`)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(Equal(map[string]any{"type": "admin"}))
		_, body = get(cc, "/v3/service_plans/"+plan.GUID, tok)
		Expect(body["visibility_type"]).To(Equal("admin"))

		status, body = visibilityCall(cc, tok, "PATCH", path, `{"type":"organization","organizations":[{"guid":"`+alpha.GUID+`"}]}`)
		Expect(status).To(Equal(http.StatusOK))
		Expect(orgNames(body)).To(Equal([]string{"alpha"}))
		status, body = visibilityCall(cc, tok, "POST", path, `{"type":"organization","organizations":[{"guid":"`+beta.GUID+`"},{"guid":"`+alpha.GUID+`"}]}`)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(Equal(map[string]any{"type": "organization"}), "apply's presenter is given no orgs")
		_, body = get(cc, path, tok)
		Expect(orgNames(body)).To(Equal([]string{"alpha", "beta"}), "added once each")
		_, body = get(cc, "/v3/service_plans/"+plan.GUID, tok)
		Expect(body["visibility_type"]).To(Equal("organization"))

		status, _ = visibilityCall(cc, tok, "DELETE", path+"/"+alpha.GUID, "")
		Expect(status).To(Equal(http.StatusNoContent))
		_, body = get(cc, path, tok)
		Expect(orgNames(body)).To(Equal([]string{"beta"}))
		status, body = visibilityCall(cc, tok, "DELETE", path+"/"+alpha.GUID, "")
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(cfError(body)["detail"]).To(Equal("Service plan visibility not found"))
		status, _ = visibilityCall(cc, tok, "DELETE", path+"/no-such-org", "")
		Expect(status).To(Equal(http.StatusNotFound))
		status, _ = visibilityCall(cc, tok, "DELETE", path+"/"+beta.GUID, "")
		Expect(status).To(Equal(http.StatusNoContent))
		_, body = get(cc, path, tok)
		Expect(body).To(Equal(map[string]any{"type": "admin"}), "the last org gone, admins only")

		status, body = visibilityCall(cc, tok, "PATCH", path, `{"type":"public"}`)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(Equal(map[string]any{"type": "public"}))
		status, body = visibilityCall(cc, tok, "DELETE", path+"/"+beta.GUID, "")
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(cfError(body)["detail"]).To(Equal("Cannot delete visibilities from non-org-restricted plans"))
	})

	DescribeTable("refuses a message ServicePlanVisibilityUpdateMessage refuses, changing nothing",
		func(body, says string) {
			status, answer := visibilityCall(cc, tok, "PATCH", path, body)
			Expect(status).To(Equal(http.StatusBadRequest))
			Expect(cfError(answer)["title"]).To(Equal("CF-BadRequest"))
			Expect(cfError(answer)["detail"]).To(ContainSubstring(says))
			_, answer = get(cc, path, tok)
			Expect(answer).To(Equal(map[string]any{"type": "public"}))
		},
		Entry("an unknown type", `{"type":"everyone"}`, "Type must be one of 'public', 'admin', 'organization'"),
		Entry("no type", `{}`, "Type must be one of"),
		Entry("organization without orgs", `{"type":"organization"}`, "Organizations can't be blank"),
		Entry("public with orgs", `{"type":"public","organizations":[{"guid":"x"}]}`, "Organizations must be blank"),
		Entry("orgs not objects with a guid", `{"type":"organization","organizations":["x"]}`, "list must be structured like this"),
		Entry("another key", `{"type":"admin","space":"x"}`, "Unknown field(s): 'space'"),
	)

	It("answers 500 for an org that does not exist, changing nothing (CC's model validation, not rescued)", func() {
		status, _ := visibilityCall(cc, tok, "PATCH", path, `{"type":"organization","organizations":[{"guid":"`+alpha.GUID+`"},{"guid":"nowhere"}]}`)
		Expect(status).To(Equal(http.StatusInternalServerError))
		_, body := get(cc, path, tok)
		Expect(body).To(Equal(map[string]any{"type": "public"}))
	})

	It("refuses a space-scoped broker's plan (422) and a plan that is not there (404)", func() {
		space, err := cc.Foundation().AddSpace(alpha.GUID, "s")
		Expect(err).NotTo(HaveOccurred())
		b, err := cc.Foundation().AddSpaceBroker("spacey", space.GUID)
		Expect(err).NotTo(HaveOccurred())
		o, err := cc.Foundation().AddOffering(b.GUID, "svc-s", "s")
		Expect(err).NotTo(HaveOccurred())
		p, err := cc.Foundation().AddPlan(o.GUID, "plan-s", "s", "")
		Expect(err).NotTo(HaveOccurred())
		status, body := visibilityCall(cc, tok, "PATCH", "/v3/service_plans/"+p.GUID+"/visibility", `{"type":"public"}`)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(cfError(body)["detail"]).To(Equal("cannot update plans with visibility type 'space'"))
		status, _ = visibilityCall(cc, tok, "PATCH", "/v3/service_plans/nope/visibility", `{"type":"public"}`)
		Expect(status).To(Equal(http.StatusNotFound))
	})
})
