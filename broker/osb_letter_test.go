package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
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
		e.director.Knobs().SetTaskDuration(5 * time.Second)
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
		rec := e.record("l-2")
		Expect(rec.Parameters).NotTo(HaveKey("instances"), "applied once its task has succeeded")
		Expect(rec.LastOperation.Pending.Parameters).To(HaveKeyWithValue("instances", BeEquivalentTo(json.Number("2"))))
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

// versioned is testCatalog with maintenance_info version on every plan, and
// redis-large's manifest template marked with it.
func versioned(version string) *catalog.Catalog {
	c := testCatalog()
	for i := range c.Services {
		for j := range c.Services[i].Plans {
			p := &c.Services[i].Plans[j]
			p.MaintenanceInfo = &catalog.MaintenanceInfo{Version: version, Description: "templates " + version}
			if p.ID == "redis-large" {
				p.Manifest = mustTemplate("manifest.yml", manifestTemplate+"tags: {templates: \""+version+"\"}\n")
			}
		}
	}
	return c
}

// restarted is a broker with catalog c on e's Vault mount and Director (the
// daemon restarted with a new catalog).
func (e *env) restarted(c *catalog.Catalog) *env {
	GinkgoHelper()
	return newEnvOn(e, func(o *broker.Options) { o.Catalog = c })
}

var _ = Describe("maintenance_info", func() {
	var e *env

	BeforeEach(func() { e = newEnv(func(o *broker.Options) { o.Catalog = versioned("1.0.0") }) })

	It("is advertised in the catalog for every plan", func() {
		a := e.request("GET", "/v2/catalog", nil)
		Expect(a.Status).To(Equal(http.StatusOK))
		for _, s := range a.Body["services"].([]any) {
			for _, p := range s.(map[string]any)["plans"].([]any) {
				Expect(p).To(HaveKeyWithValue("maintenance_info", map[string]any{"version": "1.0.0", "description": "templates 1.0.0"}))
			}
		}
	})

	It("is checked on provision: the plan's version, an empty object or none are taken and recorded; another is 422 naming both", func() {
		for id, mi := range map[string]any{"m-1": map[string]any{"version": "1.0.0"}, "m-2": map[string]any{}, "m-3": nil} {
			body := provisionBody("redis-large", nil)
			if mi != nil {
				body["maintenance_info"] = mi
			}
			a := e.request("PUT", instancePath(id)+"?accepts_incomplete=true", body)
			Expect(a.Status).To(Equal(http.StatusAccepted), "%s: %s", id, a.Raw)
			Expect(e.record(id).MaintenanceVersion).To(Equal("1.0.0"), id)
		}
		body := provisionBody("redis-small", nil)
		body["maintenance_info"] = map[string]any{"version": "0.9.0"}
		a := e.request("PUT", instancePath("m-4")+"?accepts_incomplete=true", body)
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		Expect(a.Body).To(HaveKeyWithValue("error", "MaintenanceInfoConflict"))
		Expect(a.Body["description"]).To(And(ContainSubstring("0.9.0"), ContainSubstring("1.0.0")))
		Expect(e.record("m-4")).To(BeNil())
	})

	It("is a conflict when the plan declares none", func() {
		plain := newEnv()
		body := provisionBody("redis-small", nil)
		body["maintenance_info"] = map[string]any{"version": "1.0.0"}
		a := plain.request("PUT", instancePath("m-5")+"?accepts_incomplete=true", body)
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		Expect(a.Body).To(HaveKeyWithValue("error", "MaintenanceInfoConflict"))
		Expect(a.Body["description"]).To(ContainSubstring("declares no maintenance_info"))
	})

	It("upgrades an instance on an update carrying the plan's newer version: rendered again from the current templates with its parameters and secrets", func() {
		e.provision("m-6", "redis-large", map[string]any{"instances": 2})
		e.eventuallyState("m-6", "succeeded")
		before, _, err := e.store.Manifest(context.Background(), "m-6")
		Expect(err).NotTo(HaveOccurred())
		Expect(before).To(ContainSubstring("templates: 1.0.0"))
		secrets, _, err := e.store.Secret(context.Background(), "m-6/credentials")
		Expect(err).NotTo(HaveOccurred())

		next := e.restarted(versioned("1.1.0"))
		old := next.request("PATCH", instancePath("m-6")+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "maintenance_info": map[string]any{"version": "1.0.0"}})
		Expect(old.Status).To(Equal(http.StatusUnprocessableEntity), "the platform's catalog is out of date: %s", old.Raw)
		Expect(old.Body).To(HaveKeyWithValue("error", "MaintenanceInfoConflict"))

		up := next.request("PATCH", instancePath("m-6")+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "plan_id": "redis-large", "maintenance_info": map[string]any{"version": "1.1.0"},
				"previous_values": map[string]any{"plan_id": "redis-large", "maintenance_info": map[string]any{"version": "1.0.0"}}})
		Expect(up.Status).To(Equal(http.StatusAccepted), up.Raw)
		next.eventuallyState("m-6", "succeeded")
		after, _, err := next.store.Manifest(context.Background(), "m-6")
		Expect(err).NotTo(HaveOccurred())
		Expect(after).To(And(ContainSubstring("templates: 1.1.0"), ContainSubstring("instances: 2"),
			ContainSubstring(fmt.Sprint(secrets["password"]))), "the current templates, the recorded parameters and secrets")
		r := next.record("m-6")
		Expect(r.MaintenanceVersion).To(Equal("1.1.0"))
		Expect(r.Parameters).To(HaveKeyWithValue("instances", BeEquivalentTo(json.Number("2"))))
		events, err := next.store.Events(context.Background(), "m-6", 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(events).To(ContainElement(And(HaveField("Kind", "update"),
			HaveField("Details", And(HaveKeyWithValue("maintenance_info_version", "1.1.0"), HaveKeyWithValue("previous_maintenance_info_version", "1.0.0"))))))

		again := next.request("PATCH", instancePath("m-6")+"?accepts_incomplete=true",
			map[string]any{"service_id": "redis", "maintenance_info": map[string]any{"version": "1.1.0"}})
		Expect(again.Status).To(Equal(http.StatusOK), "up to date: nothing to do: %s", again.Raw)
	})
})
