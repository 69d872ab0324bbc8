package broker_test

import (
	"encoding/json"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The requests a Cloud Controller sends and the answers the OSB spec (2.14
// to 2.17) makes a MUST, where the broker answered otherwise.
var _ = Describe("the OSB API to the letter", func() {
	var e *env

	BeforeEach(func() { e = newEnv() })

	DescribeTable("refuses a provision missing a field the spec makes mandatory, with 400 naming it, and deploys nothing",
		func(field string, value any) {
			body := provisionBody("redis-small", nil)
			if value == nil {
				delete(body, field)
			} else {
				body[field] = value
			}
			a := e.request("PUT", instancePath("l-1")+"?accepts_incomplete=true", body)
			Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
			Expect(a.Body).To(HaveKeyWithValue("description", "field "+field+" is required: a non-empty string"))
			e.nothingHappened("l-1")
		},
		Entry("no organization_guid", "organization_guid", nil),
		Entry("an empty organization_guid", "organization_guid", ""),
		Entry("no space_guid", "space_guid", nil),
		Entry("an empty space_guid", "space_guid", ""),
		Entry("an empty service_id", "service_id", ""),
		Entry("an empty plan_id", "plan_id", ""),
	)

	It("answers a re-sent PATCH of the update in progress with 202 and its operation, and another update with 422", func() {
		e.provisioned("l-2", "redis-large")
		e.director.SetTaskDuration(5 * time.Second)
		patch := map[string]any{"service_id": "redis", "plan_id": "redis-large", "parameters": map[string]any{"instances": 2}}
		first := e.request("PATCH", instancePath("l-2")+"?accepts_incomplete=true", patch)
		Expect(first.Status).To(Equal(http.StatusAccepted), first.Raw)
		again := e.request("PATCH", instancePath("l-2")+"?accepts_incomplete=true", patch)
		Expect(again.Status).To(Equal(http.StatusAccepted), again.Raw)
		Expect(again.Body).To(HaveKeyWithValue("operation", first.Body["operation"]))
		other := e.request("PATCH", instancePath("l-2")+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "parameters": map[string]any{"instances": 3}})
		Expect(other.Status).To(Equal(http.StatusUnprocessableEntity), other.Raw)
		Expect(other.Body).To(HaveKeyWithValue("error", "ConcurrencyError"))
		Expect(other.Body["description"]).To(HavePrefix("an update is in progress"))
		Expect(e.record("l-2").Parameters).To(HaveKeyWithValue("instances", BeEquivalentTo(json.Number("2"))))
	})

	Describe("service_id and plan_id of a request on an existing instance", func() {
		BeforeEach(func() { e.provisioned("l-3", "redis-small") })

		DescribeTable("are judged on update, bind, deprovision and unbind alike: 400 naming the field, nothing changed",
			func(method, path string, body map[string]any, want string) {
				a := e.request(method, path, body)
				Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
				Expect(a.Body["description"]).To(ContainSubstring(want))
				r := e.record("l-3")
				Expect(r.PlanID).To(Equal("redis-small"))
				Expect(r.LastOperation.Type).To(Equal("provision"))
				code, _, _ := e.lastOperation("l-3")
				Expect(code).To(Equal(http.StatusOK))
			},
			Entry("update, another service", "PATCH", instancePath("l-3")+"?accepts_incomplete=true",
				map[string]any{"service_id": "memo", "parameters": map[string]any{"a": 1}}, `service_id "memo" is not this instance's service`),
			Entry("update, a plan of another service", "PATCH", instancePath("l-3")+"?accepts_incomplete=true",
				map[string]any{"service_id": "redis", "plan_id": "memo-one"}, `plan_id "memo-one" is not a plan of this instance's service`),
			Entry("update, an unknown plan", "PATCH", instancePath("l-3")+"?accepts_incomplete=true",
				map[string]any{"service_id": "redis", "plan_id": "nope"}, `plan_id "nope" is not a plan`),
			Entry("bind, another service", "PUT", instancePath("l-3")+"/service_bindings/b-1",
				map[string]any{"service_id": "memo", "plan_id": "redis-small"}, `service_id "memo" is not this instance's service`),
			Entry("bind, an unknown plan", "PUT", instancePath("l-3")+"/service_bindings/b-1",
				map[string]any{"service_id": "redis", "plan_id": "nope"}, `plan_id "nope"`),
			Entry("deprovision, another service", "DELETE", instancePath("l-3")+"?accepts_incomplete=true&service_id=memo&plan_id=redis-small",
				nil, `service_id "memo"`),
			Entry("deprovision, an unknown plan", "DELETE", instancePath("l-3")+"?accepts_incomplete=true&service_id=redis&plan_id=nope",
				nil, `plan_id "nope"`),
		)

		It("are judged on unbind too", func() {
			bind := e.request("PUT", instancePath("l-3")+"/service_bindings/b-2", map[string]any{"service_id": "redis", "plan_id": "redis-small"})
			Expect(bind.Status).To(Equal(http.StatusCreated), bind.Raw)
			a := e.request("DELETE", instancePath("l-3")+"/service_bindings/b-2?service_id=memo&plan_id=memo-one", nil)
			Expect(a.Status).To(Equal(http.StatusBadRequest), a.Raw)
			Expect(a.Body["description"]).To(ContainSubstring(`service_id "memo"`))
			Expect(e.request("GET", instancePath("l-3")+"/service_bindings/b-2", nil).Status).To(Equal(http.StatusOK), "still bound")
		})
	})

	It("answers 412 with the spec's error object (description) for a missing, malformed or older version header, before reading the body", func() {
		for _, version := range []string{"", "two", "1.14", "2.13", "2.x"} {
			a := e.requestAs(brokerUser, brokerPass, version, "PUT", instancePath("l-4")+"?accepts_incomplete=true", "not json")
			Expect(a.Status).To(Equal(http.StatusPreconditionFailed), "version %q: %s", version, a.Raw)
			Expect(a.Body).To(HaveKeyWithValue("description", ContainSubstring("2.14")), version)
			Expect(a.Body).NotTo(HaveKey("Description"))
		}
		Expect(e.requestAs(brokerUser, brokerPass, "2.17", "GET", "/v2/catalog", nil).Status).To(Equal(http.StatusOK))
	})
})
