package e2e_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The OSB fields the Cloud Controller reads, checked over HTTP against the
// daemon (the sample catalog, a Director simulator of its own whose tasks
// last 3 s, a real Vault) with what the Cloud Controller sends:
// X-Broker-API-Version 2.15 and X-Broker-API-Originating-Identity
// (lib/services/service_brokers/v2/http_client.rb and client.rb in
// cloud_controller_ng).
var _ = Describe("OSB fields Cloud Foundry reads, as the Cloud Controller asks", Ordered, func() {
	const id, bid = "osb-cf-1", "osb-cf-b1"
	var (
		c   osbCall
		sim *simProcess
		d   *daemon
	)
	instance := "/v2/service_instances/" + id
	binding := instance + "/service_bindings/" + bid
	deployment := "redis-large-" + id
	identity := "cloudfoundry " + base64.StdEncoding.EncodeToString([]byte(`{"user_id": "cf-user-42"}`))
	ccContext := func(name string) map[string]any {
		return map[string]any{"platform": "cloudfoundry", "organization_guid": "org-cf", "space_guid": "space-cf",
			"organization_name": "org", "space_name": "dev", "instance_name": name,
			"organization_annotations": map[string]any{}, "space_annotations": map[string]any{}}
	}
	// tasks is how many tasks the Director ran for the instance's deployment.
	tasks := func() int {
		GinkgoHelper()
		code, body := simGet(sim.url, "/tasks?deployment="+deployment+"&limit=100")
		Expect(code).To(Equal(http.StatusOK), body)
		return strings.Count(body, `"id":`)
	}
	// oneShape expects a's body to be the one error object.
	oneShape := func(a osbAnswer) {
		GinkgoHelper()
		Expect(a.Body).To(HaveLen(2), a.Raw)
		Expect(a.Body["error"]).To(MatchRegexp(`^[A-Z][A-Za-z]+$`), a.Raw)
		Expect(a.Body["description"]).NotTo(BeEmpty(), a.Raw)
	}

	BeforeAll(func() {
		sim = startSim("-task-duration", "3s")
		d = newHAWorld(boshSection([]string{sim.url})).start("  interval: 1h\n")
		c = osbCall{url: d.url, version: "2.15", headers: map[string]string{"X-Broker-API-Originating-Identity": identity}}
	})

	It("catalog: allow_context_updates on every service, metadata.shareable where service.yml says so, plan_updateable per plan where an instance may move, maximum_polling_duration where plan.yml sets it", func() {
		a := c.do("GET", "/v2/catalog", nil)
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		plans := map[string]map[string]any{}
		services := map[string]map[string]any{}
		for _, s := range a.Body["services"].([]any) {
			svc := s.(map[string]any)
			services[svc["id"].(string)] = svc
			Expect(svc).To(HaveKeyWithValue("allow_context_updates", true), "a context-only update deploys nothing")
			for _, p := range svc["plans"].([]any) {
				plans[p.(map[string]any)["id"].(string)] = p.(map[string]any)
			}
		}
		Expect(services["redis"]).To(HaveKeyWithValue("metadata", HaveKeyWithValue("shareable", true)))
		Expect(services["postgresql"]).NotTo(HaveKey("metadata"))
		Expect(plans["redis-small"]).To(HaveKeyWithValue("plan_updateable", true), "redis-large is updatable")
		Expect(plans["redis-large"]).To(HaveKeyWithValue("plan_updateable", true), "redis-small is updatable")
		Expect(plans["postgresql-small"]).To(HaveKeyWithValue("plan_updateable", false), "postgresql-large is not updatable")
		Expect(plans["postgresql-large"]).To(HaveKeyWithValue("plan_updateable", true), "postgresql-small is updatable")
		Expect(plans["redis-large"]).To(HaveKeyWithValue("maximum_polling_duration", 7200.0))
		Expect(plans["redis-small"]).NotTo(HaveKey("maximum_polling_duration"))
		Expect(plans["redis-large"]).To(HaveKeyWithValue("maintenance_info", HaveKeyWithValue("version", "1.0.0")))
	})

	It("provision: 202 with the plan's version among the metadata labels; last_operation asks to wait (Retry-After: the plan's polling_interval) while in progress, not once done; the originating user is in the instance's history", func() {
		a := c.do("PUT", instance+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "plan_id": "redis-large",
			"organization_guid": "org-cf", "space_guid": "space-cf", "context": ccContext("cache"),
			"maintenance_info": map[string]any{"version": "1.0.0"}})
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Expect(a.Body).To(HaveKeyWithValue("metadata", HaveKeyWithValue("labels", HaveKeyWithValue("maintenance_info_version", "1.0.0"))))
		poll := c.do("GET", instance+"/last_operation?service_id=redis&plan_id=redis-large&operation=provision", nil)
		Expect(poll.Body).To(HaveKeyWithValue("state", "in progress"), poll.Raw)
		Expect(poll.Header.Get("Retry-After")).To(Equal("15"), "redis-large's polling_interval")
		done := c.settled(instance + "/last_operation?service_id=redis&plan_id=redis-large&operation=provision")
		Expect(done.Body).To(HaveKeyWithValue("state", "succeeded"), done.Raw)
		Expect(done.Header).NotTo(HaveKey("Retry-After"))
		_, view := d.get("/b/instances/"+id, opUser, opPass)
		Expect(view).To(ContainSubstring("cf-user-42"))
	})

	It("update: a rename (only the context changes, as the Cloud Controller sends it) is 200 and deploys nothing; the new name is recorded", func() {
		before := tasks()
		a := c.do("PATCH", instance+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "plan_id": "redis-large",
			"previous_values": map[string]any{"plan_id": "redis-large", "service_id": "redis", "organization_id": "org-cf", "space_id": "space-cf",
				"maintenance_info": map[string]any{"version": "1.0.0"}},
			"context": ccContext("renamed-in-cf")})
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(tasks()).To(Equal(before), "nothing deployed")
		_, view := d.get("/b/instances/"+id, opUser, opPass)
		Expect(view).To(ContainSubstring("renamed-in-cf"))
	})

	It("update: a failed one says the instance is usable and the update repeatable; sent again it deploys again", func() {
		res, err := http.Post(sim.url+"/_sim/next-task", "application/json",
			strings.NewReader(fmt.Sprintf(`{"deployment": %q, "state": "error"}`, deployment)))
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusNoContent))
		change := map[string]any{"service_id": "redis", "plan_id": "redis-large", "parameters": map[string]any{"maxmemory": "512mb"},
			"previous_values": map[string]any{"plan_id": "redis-large"}, "context": ccContext("renamed-in-cf")}
		Expect(c.do("PATCH", instance+"?accepts_incomplete=true", change).Status).To(Equal(http.StatusAccepted))
		failed := c.settled(instance + "/last_operation?operation=update")
		Expect(failed.Body).To(HaveKeyWithValue("state", "failed"), failed.Raw)
		Expect(failed.Body).To(HaveKeyWithValue("instance_usable", true))
		Expect(failed.Body).To(HaveKeyWithValue("update_repeatable", true))
		Expect(c.do("PATCH", instance+"?accepts_incomplete=true", change).Status).To(Equal(http.StatusAccepted))
		Expect(c.settled(instance + "/last_operation?operation=update").Body).To(HaveKeyWithValue("state", "succeeded"))
	})

	It("bind: a body sent as a form (curl -d) is read as JSON; the binding's last_operation is 410 once unbound, with or without the operation", func() {
		with := c
		with.headers = map[string]string{"X-Broker-API-Originating-Identity": identity, "Content-Type": "application/x-www-form-urlencoded"}
		a := with.do("PUT", binding+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "plan_id": "redis-large",
			"bind_resource": map[string]any{"app_guid": "app-cf"}, "context": ccContext("renamed-in-cf")})
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Expect(c.settled(binding + "/last_operation?operation=bind").Body).To(HaveKeyWithValue("state", "succeeded"))
		Expect(c.do("DELETE", binding+"?accepts_incomplete=true&service_id=redis&plan_id=redis-large", nil).Status).To(Equal(http.StatusAccepted))
		Eventually(func() int { return c.do("GET", binding+"/last_operation?operation=unbind", nil).Status }).
			WithTimeout(60 * time.Second).WithPolling(250 * time.Millisecond).Should(Equal(http.StatusGone))
		gone := c.do("GET", binding+"/last_operation", nil)
		Expect(gone.Status).To(Equal(http.StatusGone), gone.Raw)
		Expect(gone.Raw).To(MatchJSON(`{}`))
	})

	It("errors: every refusal is one object {error, description}", func() {
		for _, a := range []osbAnswer{
			c.do("PUT", instance+"?accepts_incomplete=true", `{"service_id": `),
			c.do("PUT", instance, map[string]any{"service_id": "redis", "plan_id": "redis-large", "organization_guid": "o", "space_guid": "s"}),
			c.do("GET", "/v2/service_instances/never/last_operation", nil),
			c.do("GET", "/v2/nowhere", nil),
			osbCall{url: c.url, version: "-"}.do("GET", "/v2/catalog", nil),
			osbCall{url: c.url, version: "2.15", user: "-"}.do("GET", "/v2/catalog", nil),
			c.do("PATCH", instance+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "maintenance_info": map[string]any{"version": "0.1.0"}}),
		} {
			Expect(a.Status).To(BeNumerically(">=", 400), a.Raw)
			oneShape(a)
		}
	})

	It("deprovision: 202, then last_operation succeeded (remembered for an hour), the deployment gone", func() {
		Expect(c.do("DELETE", instance+"?accepts_incomplete=true&service_id=redis&plan_id=redis-large", nil).Status).To(Equal(http.StatusAccepted))
		Expect(c.settled(instance + "/last_operation?operation=deprovision").Body).To(HaveKeyWithValue("state", "succeeded"))
		Expect(c.do("GET", instance+"/last_operation", nil).Body).To(HaveKeyWithValue("state", "succeeded"), "remembered")
		code, _ := simGet(sim.url, "/deployments/"+deployment)
		Expect(code).To(Equal(http.StatusNotFound))
	})
})
