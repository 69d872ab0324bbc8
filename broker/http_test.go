package broker_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("HTTP", func() {
	var e *env

	BeforeEach(func() { e = newEnv() })

	It("serves the catalog, with plan_updateable where an instance may move to another plan", func() {
		a := e.request("GET", "/v2/catalog", nil)
		Expect(a.Status).To(Equal(http.StatusOK))
		services := a.Body["services"].([]any)
		Expect(services).To(HaveLen(2))
		redis := services[0].(map[string]any)
		Expect(redis).To(HaveKeyWithValue("id", "redis"))
		Expect(redis).To(HaveKeyWithValue("bindable", true))
		Expect(redis).To(HaveKeyWithValue("plan_updateable", true))
		Expect(redis["plans"]).To(HaveLen(2))
		Expect(services[1]).To(HaveKeyWithValue("bindable", false))
		Expect(redis).To(HaveKeyWithValue("metadata", HaveKeyWithValue("shareable", true)), "Cloud Foundry shares only what says so")
		Expect(redis).To(HaveKeyWithValue("allow_context_updates", true), "a context-only update deploys nothing (identity_test)")
		Expect(services[1]).NotTo(HaveKey("metadata"))
		plans := redis["plans"].([]any)
		Expect(plans[0]).NotTo(HaveKey("maximum_polling_duration"), "0: the platform's own")
		Expect(plans[1]).To(HaveKeyWithValue("maximum_polling_duration", 7200.0))
		Expect(plans[0]).To(HaveKeyWithValue("plan_updateable", true), "small may move to large, which is updatable")
		Expect(plans[1]).To(HaveKeyWithValue("plan_updateable", false), "large may not move to small, which is not")
		Expect(services[1]).To(HaveKeyWithValue("plan_updateable", false))
		Expect(services[1].(map[string]any)["plans"].([]any)[0]).To(HaveKeyWithValue("plan_updateable", false), "a plan alone has nowhere to go")
	})

	It("answers 401 to wrong or missing credentials on /v2/* and /b/*, and counts them", func() {
		for _, path := range []string{"/v2/catalog", "/v2/service_instances/x/last_operation", "/b/reconcile", "/b/other"} {
			Expect(e.requestAs(brokerUser, "wrong", apiVersion, "GET", path, nil).Status).To(Equal(http.StatusUnauthorized), path)
			Expect(e.requestAs("", "", apiVersion, "GET", path, nil).Status).To(Equal(http.StatusUnauthorized), path)
		}
		Expect(e.requestAs(brokerUser, "wrong", apiVersion, "PUT", instancePath("z"), provisionBody("redis-small", nil)).Status).
			To(Equal(http.StatusUnauthorized))
		Expect(e.record("z")).To(BeNil())
		Expect(metric(e.registry, "blacksmith_broker_requests_total", map[string]string{"operation": "catalog", "code": "401"})).To(Equal(2.0))
	})

	It("answers 412 without the API version header", func() {
		Expect(e.requestAs(brokerUser, brokerPass, "", "GET", "/v2/catalog", nil).Status).To(Equal(http.StatusPreconditionFailed))
		Expect(e.requestAs(brokerUser, brokerPass, "1.0", "GET", "/v2/catalog", nil).Status).To(Equal(http.StatusPreconditionFailed))
	})

	It("answers GET instance 404 while provisioning, then the instance with its parameters", func() {
		e.director.Knobs().SetTaskDuration(time.Second)
		e.provision("g-1", "redis-small", map[string]any{"maxmemory": "1gb"})
		Expect(e.request("GET", instancePath("g-1"), nil).Status).To(Equal(http.StatusNotFound))
		e.eventuallyState("g-1", "succeeded")
		a := e.request("GET", instancePath("g-1"), nil)
		Expect(a.Status).To(Equal(http.StatusOK))
		Expect(a.Body).To(HaveKeyWithValue("plan_id", "redis-small"))
		Expect(a.Body["parameters"]).To(HaveKeyWithValue("maxmemory", "1gb"))
		Expect(e.request("GET", instancePath("nobody"), nil).Status).To(Equal(http.StatusNotFound))
	})

	It("counts requests by operation and status code", func() {
		e.provision("m-1", "redis-small", nil)
		e.lastOperation("m-1")
		Expect(metric(e.registry, "blacksmith_broker_requests_total", map[string]string{"operation": "provision", "code": "202"})).To(Equal(1.0))
		Expect(metric(e.registry, "blacksmith_broker_requests_total", map[string]string{"operation": "last_operation", "code": "200"})).To(Equal(1.0))
		Expect(metric(e.registry, "blacksmith_broker_request_duration_seconds", map[string]string{"operation": "provision"})).To(Equal(1.0))
	})
})
