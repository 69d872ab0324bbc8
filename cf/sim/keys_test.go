package sim_test

import (
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

const keyCatalog = `{"services":[{"id":"svc-1","name":"redis","description":"Redis","bindable":true,"bindings_retrievable":true,
"plans":[{"id":"plan-1","name":"small","description":"Small"},{"id":"plan-2","name":"nobind","description":"No","bindable":false}]}]}`

var _ = Describe("service keys", func() {
	var (
		cc     *sim.CC
		tok    string
		broker *osbBroker
		inst   sim.Instance
		space  sim.Space
	)
	jobOf := func(loc string) func() map[string]any {
		return func() map[string]any { _, body := get(cc, loc, tok); return body }
	}
	state := func(loc string) func() string {
		return func() string { return jobOf(loc)()["state"].(string) }
	}
	BeforeEach(func() {
		cc = start(sim.Options{PollInterval: 20 * time.Millisecond})
		tok = mustToken(cc)
		broker = newOSBBroker(keyCatalog)
		status, loc, _ := sendJSON(cc, "POST", "/v3/service_brokers",
			`{"name":"b1","url":"`+broker.srv.URL+`","authentication":{"type":"basic","credentials":{"username":"admin","password":"pw"}}}`, tok)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(state(loc)).Should(Equal("COMPLETE"))
		org := cc.Foundation().AddOrg("org-1")
		var err error
		space, err = cc.Foundation().AddSpace(org.GUID, "space-1")
		Expect(err).NotTo(HaveOccurred())
		var plan sim.Plan
		for _, p := range cc.Foundation().Plans() {
			if p.CatalogID == "plan-1" {
				plan = p
			}
		}
		inst, err = cc.Foundation().AddInstance("", "my-redis", plan.GUID, space.GUID,
			sim.LastOperation{Type: sim.OpCreate, State: sim.StateSucceeded})
		Expect(err).NotTo(HaveOccurred())
	})
	createKey := func(name, instance, extra string) (int, string, map[string]any) {
		return sendJSON(cc, "POST", "/v3/service_credential_bindings", `{"type":"key","name":"`+name+`"`+extra+
			`,"relationships":{"service_instance":{"data":{"guid":"`+instance+`"}}}}`, tok)
	}
	keyNamed := func(name string) map[string]any {
		_, list := get(cc, "/v3/service_credential_bindings?type=key&names="+name+"&service_instance_guids="+inst.GUID, tok)
		if res := list["resources"].([]any); len(res) > 0 {
			return res[0].(map[string]any)
		}
		return nil
	}

	It("binds at the broker with CC's body and keeps the credentials for details", func() {
		broker.answer("PUT", reply(http.StatusCreated, `{"credentials":{"user":"u","password":"p"},"syslog_drain_url":"syslog://x"}`))
		status, loc, _ := createKey("k1", inst.GUID, `,"parameters":{"ro":true}`)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(state(loc)).Should(Equal("COMPLETE"))
		Expect(jobOf(loc)()["operation"]).To(Equal("service_keys.create"))
		key := keyNamed("k1")
		Expect(key).To(HaveKeyWithValue("type", "key"))
		Expect(key["last_operation"]).To(And(HaveKeyWithValue("type", "create"), HaveKeyWithValue("state", "succeeded")))
		guid := key["guid"].(string)
		Expect(key["relationships"]).To(Equal(map[string]any{"service_instance": map[string]any{"data": map[string]any{"guid": inst.GUID}}}))

		puts := broker.requests("PUT")
		Expect(puts).To(HaveLen(1))
		r := puts[0]
		Expect(r.path).To(Equal("/v2/service_instances/" + inst.GUID + "/service_bindings/" + guid))
		Expect(r.query).To(Equal(map[string][]string{"accepts_incomplete": {"true"}}))
		Expect(r.body).To(And(HaveKeyWithValue("service_id", "svc-1"), HaveKeyWithValue("plan_id", "plan-1"),
			HaveKeyWithValue("bind_resource", map[string]any{}), HaveKeyWithValue("parameters", map[string]any{"ro": true})))
		Expect(r.body).NotTo(HaveKey("app_guid"))
		Expect(r.body["context"]).To(And(HaveKeyWithValue("platform", "cloudfoundry"), HaveKeyWithValue("space_guid", space.GUID),
			HaveKeyWithValue("space_name", "space-1"), HaveKeyWithValue("organization_name", "org-1"), Not(HaveKey("instance_name"))))
		Expect(r.header.Get("X-Broker-Api-Version")).To(Equal("2.15"))
		Expect(r.header.Get("X-Broker-API-Originating-Identity")).To(HavePrefix("cloudfoundry "))

		status, one := get(cc, "/v3/service_credential_bindings/"+guid, tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(one["links"]).To(HaveKeyWithValue("details", HaveKeyWithValue("href", cc.URL()+"/v3/service_credential_bindings/"+guid+"/details")))
		status, details := get(cc, "/v3/service_credential_bindings/"+guid+"/details", tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(details).To(Equal(map[string]any{"credentials": map[string]any{"user": "u", "password": "p"}, "syslog_drain_url": "syslog://x"}))
	})

	It("polls the binding's last_operation after a 202, then fetches the binding", func() {
		broker.answer("PUT", reply(http.StatusAccepted, `{"operation":"bind-1"}`))
		broker.answer("GET last_operation", reply(http.StatusOK, `{"state":"in progress"}`))
		broker.answer("GET", reply(http.StatusOK, `{"credentials":{"uri":"redis://late"}}`))
		_, loc, _ := createKey("k1", inst.GUID, "")
		Eventually(func() any { return keyNamed("k1")["last_operation"] }).Should(HaveKeyWithValue("state", "in progress"))
		guid := keyNamed("k1")["guid"].(string)
		status, body := get(cc, "/v3/service_credential_bindings/"+guid+"/details", tok)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(cfError(body)["detail"]).To(Equal("Creation of service key in progress"))
		broker.answer("GET last_operation", reply(http.StatusOK, `{"state":"succeeded"}`))
		Eventually(state(loc)).Should(Equal("COMPLETE"))
		polls := broker.requests("GET")
		Expect(polls[0].path).To(Equal("/v2/service_instances/" + inst.GUID + "/service_bindings/" + guid + "/last_operation"))
		Expect(polls[0].query).To(Equal(map[string][]string{"operation": {"bind-1"}, "plan_id": {"plan-1"}, "service_id": {"svc-1"}}))
		Expect(polls[len(polls)-1].path).To(Equal("/v2/service_instances/" + inst.GUID + "/service_bindings/" + guid))
		_, details := get(cc, "/v3/service_credential_bindings/"+guid+"/details", tok)
		Expect(details["credentials"]).To(Equal(map[string]any{"uri": "redis://late"}))
	})

	It("fails the job as CC words it when the broker's bind fails", func() {
		broker.answer("PUT", reply(http.StatusAccepted, `{}`))
		broker.answer("GET last_operation", reply(http.StatusOK, `{"state":"failed","description":"no room"}`))
		_, loc, _ := createKey("k1", inst.GUID, "")
		Eventually(state(loc)).Should(Equal("FAILED"))
		Expect(jobOf(loc)()["errors"]).To(ConsistOf(HaveKeyWithValue("detail", "create could not be completed: no room")))
		Expect(keyNamed("k1")["last_operation"]).To(And(HaveKeyWithValue("state", "failed"), HaveKeyWithValue("description", "no room")))

		broker.answer("PUT", reply(http.StatusCreated, `{"credentials":{}}`)) // a failed key's name may be used again
		status, loc, _ := createKey("k1", inst.GUID, "")
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(state(loc)).Should(Equal("COMPLETE"))
	})

	It("refuses with CC's messages", func() {
		status, _, body := createKey("k1", "nope", "")
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(cfError(body)["detail"]).To(Equal("The service instance could not be found: 'nope'"))

		broker.answer("PUT", reply(http.StatusCreated, `{"credentials":{}}`))
		_, loc, _ := createKey("k1", inst.GUID, "")
		Eventually(state(loc)).Should(Equal("COMPLETE"))
		status, _, body = createKey("k1", inst.GUID, "")
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(cfError(body)["detail"]).To(Equal("The binding name is invalid. Key binding names must be unique. " +
			"The service instance already has a key binding with name 'k1'."))

		Expect(cc.Foundation().SetLastOperation(inst.GUID, sim.LastOperation{Type: sim.OpUpdate, State: sim.StateInProgress})).To(Succeed())
		_, _, body = createKey("k2", inst.GUID, "")
		Expect(cfError(body)["detail"]).To(Equal("There is an operation in progress for the service instance"))
	})

	It("unbinds at the broker on delete, 410 meaning gone", func() {
		broker.answer("PUT", reply(http.StatusCreated, `{"credentials":{}}`))
		_, loc, _ := createKey("k1", inst.GUID, "")
		Eventually(state(loc)).Should(Equal("COMPLETE"))
		guid := keyNamed("k1")["guid"].(string)
		broker.answer("DELETE", reply(http.StatusAccepted, `{"operation":"unbind-1"}`))
		broker.answer("GET last_operation", reply(http.StatusGone, `{}`))
		status, loc, _ := sendJSON(cc, "DELETE", "/v3/service_credential_bindings/"+guid, "", tok)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(state(loc)).Should(Equal("COMPLETE"))
		Expect(jobOf(loc)()["operation"]).To(Equal("service_keys.delete"))
		del := broker.requests("DELETE")
		Expect(del).To(HaveLen(1))
		Expect(del[0].path).To(Equal("/v2/service_instances/" + inst.GUID + "/service_bindings/" + guid))
		Expect(del[0].query).To(Equal(map[string][]string{"accepts_incomplete": {"true"}, "plan_id": {"plan-1"}, "service_id": {"svc-1"}}))
		status, _ = get(cc, "/v3/service_credential_bindings/"+guid, tok)
		Expect(status).To(Equal(http.StatusNotFound))
	})

	It("unbinds an instance's keys before it deprovisions it", func() {
		broker.answer("PUT", reply(http.StatusCreated, `{"credentials":{}}`))
		_, loc, _ := createKey("k1", inst.GUID, "")
		Eventually(state(loc)).Should(Equal("COMPLETE"))
		broker.answer("DELETE", reply(http.StatusOK, `{}`))
		_, loc, _ = sendJSON(cc, "DELETE", "/v3/service_instances/"+inst.GUID, "", tok)
		Eventually(state(loc)).Should(Equal("COMPLETE"))
		del := broker.requests("DELETE")
		Expect(del).To(HaveLen(2))
		Expect(del[0].path).To(ContainSubstring("/service_bindings/"))
		Expect(del[1].path).To(Equal("/v2/service_instances/" + inst.GUID))
		Expect(keyNamed("k1")).To(BeNil())
	})

	It("lists keys with include=service_instance", func() {
		broker.answer("PUT", reply(http.StatusCreated, `{"credentials":{}}`))
		_, loc, _ := createKey("k1", inst.GUID, "")
		Eventually(state(loc)).Should(Equal("COMPLETE"))
		_, list := get(cc, "/v3/service_credential_bindings?service_instance_guids="+inst.GUID+"&include=service_instance", tok)
		Expect(guids(list)).To(HaveLen(1))
		Expect(list["included"]).To(HaveKeyWithValue("service_instances", ConsistOf(HaveKeyWithValue("guid", inst.GUID))))
		_, list = get(cc, "/v3/service_credential_bindings?type=app", tok)
		Expect(guids(list)).To(BeEmpty())
	})
})
