package sim_test

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// platformCatalog has an offering whose plans change (small, large,
// nobind), one whose plans do not (fixed), and a plan without
// maintenance_info (large).
const platformCatalog = `{"services":[{"id":"svc-1","name":"redis","description":"Redis","bindable":true,"plan_updateable":true,
"bindings_retrievable":true,"plans":[{"id":"plan-1","name":"small","description":"Small","maintenance_info":{"version":"2.0.0"}},
{"id":"plan-2","name":"large","description":"Large"},{"id":"plan-3","name":"nobind","description":"No","bindable":false}]},
{"id":"svc-2","name":"pg","description":"PG","bindable":true,"plans":[{"id":"plan-4","name":"fixed","description":"Fixed"}]}]}`

// platform is a simulator with the platformCatalog's broker registered and a space.
type platform struct {
	cc     *sim.CC
	tok    string
	broker *osbBroker
	space  sim.Space
	plans  map[string]sim.Plan // by catalog id
}

func newPlatform() *platform {
	p := &platform{cc: start(sim.Options{PollInterval: 20 * time.Millisecond}), broker: newOSBBroker(platformCatalog),
		plans: map[string]sim.Plan{}}
	p.tok = mustToken(p.cc)
	status, loc, _ := sendJSON(p.cc, "POST", "/v3/service_brokers",
		`{"name":"b1","url":"`+p.broker.srv.URL+`","authentication":{"type":"basic","credentials":{"username":"admin","password":"pw"}}}`, p.tok)
	Expect(status).To(Equal(http.StatusAccepted))
	Eventually(p.jobState(loc)).Should(Equal("COMPLETE"))
	for _, pl := range p.cc.Foundation().Plans() {
		p.plans[pl.CatalogID] = pl
	}
	org := p.cc.Foundation().AddOrg("org-1")
	var err error
	p.space, err = p.cc.Foundation().AddSpace(org.GUID, "space-1")
	Expect(err).NotTo(HaveOccurred())
	return p
}

func (p *platform) jobState(loc string) func() string {
	return func() string { _, body := get(p.cc, loc, p.tok); return body["state"].(string) }
}

// instance creates an instance of the plan (by catalog id) and waits for its job's end.
func (p *platform) instance(name, plan string) (guid, jobState string) {
	GinkgoHelper()
	status, loc, _ := sendJSON(p.cc, "POST", "/v3/service_instances", `{"type":"managed","name":"`+name+`","relationships":{`+
		`"space":{"data":{"guid":"`+p.space.GUID+`"}},"service_plan":{"data":{"guid":"`+p.plans[plan].GUID+`"}}}}`, p.tok)
	Expect(status).To(Equal(http.StatusAccepted))
	Eventually(p.jobState(loc)).ShouldNot(Equal("PROCESSING"))
	_, list := get(p.cc, "/v3/service_instances?names="+name, p.tok)
	return list["resources"].([]any)[0].(map[string]any)["guid"].(string), p.jobState(loc)()
}

// patch sends an instance update and returns the status and the error's detail (or the Location).
func (p *platform) patch(guid, body string) (int, string) {
	GinkgoHelper()
	status, loc, out := sendJSON(p.cc, "PATCH", "/v3/service_instances/"+guid, body, p.tok)
	if status >= 400 {
		return status, cfError(out)["detail"].(string)
	}
	return status, loc
}

func (p *platform) app(name string) string {
	GinkgoHelper()
	status, _, body := sendJSON(p.cc, "POST", "/v3/apps", `{"name":"`+name+`","relationships":{"space":{"data":{"guid":"`+p.space.GUID+`"}}}}`, p.tok)
	Expect(status).To(Equal(http.StatusCreated), "%v", body)
	return body["guid"].(string)
}

func (p *platform) bindApp(app, instance string) (int, string, map[string]any) {
	return sendJSON(p.cc, "POST", "/v3/service_credential_bindings", `{"type":"app","relationships":{"service_instance":{"data":{"guid":"`+
		instance+`"}},"app":{"data":{"guid":"`+app+`"}}}}`, p.tok)
}

var _ = Describe("updates refused as CC's preflight refuses them", func() {
	var p *platform
	BeforeEach(func() {
		p = newPlatform()
		p.broker.answer("PUT", reply(http.StatusCreated, `{}`))
	})

	It("refuses a plan change the current plan does not allow", func() {
		guid, _ := p.instance("pg", "plan-4")
		status, detail := p.patch(guid, `{"relationships":{"service_plan":{"data":{"guid":"`+p.plans["plan-4"].GUID+`"}}}}`)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(detail).To(Equal("The service does not support changing plans."))
		Expect(p.broker.requests("PATCH")).To(BeEmpty())
	})

	It("refuses a non-bindable plan while an app is bound", func() {
		guid, _ := p.instance("r", "plan-1")
		_, loc, _ := p.bindApp(p.app("web"), guid)
		Eventually(p.jobState(loc)).Should(Equal("COMPLETE"))
		status, detail := p.patch(guid, `{"relationships":{"service_plan":{"data":{"guid":"`+p.plans["plan-3"].GUID+`"}}}}`)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(detail).To(Equal("The service plan is invalid: cannot switch to non-bindable plan when service bindings exist"))
	})

	It("refuses maintenance_info with a plan change, without the plan's support, and of another version", func() {
		guid, _ := p.instance("r", "plan-1")
		status, detail := p.patch(guid, `{"maintenance_info":{"version":"2.0.0"},"relationships":{"service_plan":{"data":{"guid":"`+
			p.plans["plan-2"].GUID+`"}}}}`)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(detail).To(Equal("maintenance_info should not be changed when switching to different plan."))
		status, detail = p.patch(guid, `{"maintenance_info":{"version":"3.0.0"}}`)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(detail).To(HavePrefix("maintenance_info.version requested is invalid."))
		large, _ := p.instance("l", "plan-2")
		status, detail = p.patch(large, `{"maintenance_info":{"version":"2.0.0"}}`)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(detail).To(Equal("The service broker does not support upgrades for service instances created from this plan."))
		Expect(p.broker.requests("PATCH")).To(BeEmpty())
	})

	It("upgrades to the plan's maintenance_info at the broker (cf upgrade-service)", func() {
		guid, _ := p.instance("r", "plan-1")
		p.broker.answer("PATCH", reply(http.StatusOK, `{}`))
		Expect(p.cc.Foundation().SetInstanceMaintenanceVersion(guid, "1.0.0")).To(Succeed())
		status, loc := p.patch(guid, `{"maintenance_info":{"version":"2.0.0"}}`)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(p.jobState(loc)).Should(Equal("COMPLETE"))
		r := p.broker.requests("PATCH")[0]
		Expect(r.body).To(HaveKeyWithValue("maintenance_info", map[string]any{"version": "2.0.0"}))
		Expect(r.body["previous_values"]).To(HaveKeyWithValue("maintenance_info", map[string]any{"version": "1.0.0"}))
		in, _ := p.cc.Foundation().Instance(guid)
		Expect(in.MaintenanceVersion).To(Equal("2.0.0"))
	})

	It("answers 404 for an instance whose create failed", func() {
		p.broker.answer("PUT", reply(http.StatusBadRequest, `{}`))
		guid, state := p.instance("r", "plan-1")
		Expect(state).To(Equal("FAILED"))
		status, detail := p.patch(guid, `{"parameters":{"a":1}}`)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(detail).To(Equal("The service instance could not be found: r"))
	})
})

var _ = Describe("apps and app bindings", func() {
	var p *platform
	BeforeEach(func() {
		p = newPlatform()
		p.broker.answer("PUT", reply(http.StatusCreated, `{"credentials":{"pw":"s3cret"}}`))
	})

	It("creates, shows and lists apps, refusing a taken name", func() {
		guid := p.app("web")
		status, body := get(p.cc, "/v3/apps/"+guid, p.tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).To(And(HaveKeyWithValue("name", "web"), HaveKeyWithValue("state", "STOPPED")))
		Expect(body["relationships"]).To(HaveKeyWithValue("space", HaveKeyWithValue("data", HaveKeyWithValue("guid", p.space.GUID))))
		_, list := get(p.cc, "/v3/apps?names=web&space_guids="+p.space.GUID, p.tok)
		Expect(guids(list)).To(Equal([]string{guid}))
		_, list = get(p.cc, "/v3/apps?names=other", p.tok)
		Expect(guids(list)).To(BeEmpty())
		status, _, body = sendJSON(p.cc, "POST", "/v3/apps", `{"name":"web","relationships":{"space":{"data":{"guid":"`+p.space.GUID+`"}}}}`, p.tok)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(cfError(body)["detail"]).To(Equal("App with the name 'web' already exists."))
		status, _ = get(p.cc, "/v3/apps/nope", p.tok)
		Expect(status).To(Equal(http.StatusNotFound))
	})

	It("binds an app at the broker with its guid, and unbinds it", func() {
		inst, _ := p.instance("r", "plan-1")
		app := p.app("web")
		status, loc, _ := p.bindApp(app, inst)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(p.jobState(loc)).Should(Equal("COMPLETE"))
		_, job := get(p.cc, loc, p.tok)
		Expect(job["operation"]).To(Equal("service_bindings.create"))
		puts := p.broker.requests("PUT")
		bind := puts[len(puts)-1]
		Expect(bind.path).To(HavePrefix("/v2/service_instances/" + inst + "/service_bindings/"))
		Expect(bind.query).To(Equal(map[string][]string{"accepts_incomplete": {"true"}}))
		Expect(bind.body).To(HaveKeyWithValue("app_guid", app))
		Expect(bind.body["bind_resource"]).To(Equal(map[string]any{"app_guid": app, "space_guid": p.space.GUID, "app_annotations": map[string]any{}}))
		Expect(bind.header.Get("X-Broker-Api-Version")).To(Equal("2.15"))
		Expect(bind.header.Get("X-Broker-API-Originating-Identity")).To(HavePrefix("cloudfoundry "))

		_, list := get(p.cc, "/v3/service_credential_bindings?type=app&app_guids="+app+"&service_instance_guids="+inst+"&include=app", p.tok)
		Expect(list["resources"]).To(HaveLen(1))
		b := list["resources"].([]any)[0].(map[string]any)
		Expect(b).To(HaveKeyWithValue("type", "app"))
		Expect(b["relationships"]).To(HaveKeyWithValue("app", HaveKeyWithValue("data", HaveKeyWithValue("guid", app))))
		Expect(list["included"]).To(HaveKeyWithValue("apps", HaveLen(1)))
		_, keys := get(p.cc, "/v3/service_credential_bindings?type=key", p.tok)
		Expect(keys["resources"]).To(BeEmpty())
		_, details := get(p.cc, "/v3/service_credential_bindings/"+b["guid"].(string)+"/details", p.tok)
		Expect(details["credentials"]).To(Equal(map[string]any{"pw": "s3cret"}))

		status, again, body := p.bindApp(app, inst)
		Expect(status).To(Equal(http.StatusUnprocessableEntity), again)
		Expect(cfError(body)["detail"]).To(Equal("The app is already bound to the service instance"))

		status, del, _ := sendJSON(p.cc, "DELETE", "/v3/service_credential_bindings/"+b["guid"].(string), "", p.tok)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(p.jobState(del)).Should(Equal("COMPLETE"))
		_, job = get(p.cc, del, p.tok)
		Expect(job["operation"]).To(Equal("service_bindings.delete"))
		dels := p.broker.requests("DELETE")
		Expect(dels[len(dels)-1].path).To(Equal(bind.path))
		_, list = get(p.cc, "/v3/service_credential_bindings?app_guids="+app, p.tok)
		Expect(list["resources"]).To(BeEmpty())
	})

	It("refuses a binding to an app of another space, or an unknown app", func() {
		inst, _ := p.instance("r", "plan-1")
		other, err := p.cc.Foundation().AddSpace(p.cc.Foundation().AddOrg("org-2").GUID, "elsewhere")
		Expect(err).NotTo(HaveOccurred())
		status, _, body := sendJSON(p.cc, "POST", "/v3/apps", `{"name":"far","relationships":{"space":{"data":{"guid":"`+other.GUID+`"}}}}`, p.tok)
		Expect(status).To(Equal(http.StatusCreated))
		status, _, body = p.bindApp(body["guid"].(string), inst)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(cfError(body)["detail"]).To(Equal("The service instance and the app are in different spaces"))
		status, _, body = p.bindApp("nope", inst)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(cfError(body)["detail"]).To(Equal("The app could not be found: 'nope'"))
	})
})

var _ = Describe("purge and orphan mitigation", func() {
	var p *platform
	BeforeEach(func() { p = newPlatform() })
	deletes := func() []string {
		var out []string
		for _, r := range p.broker.requests("DELETE") {
			q := url.Values(r.query)
			out = append(out, r.path+"?"+strings.Join([]string{q.Get("accepts_incomplete"), q.Get("plan_id"), q.Get("service_id")}, ","))
		}
		return out
	}

	It("purges an instance and its bindings without asking the broker", func() {
		p.broker.answer("PUT", reply(http.StatusCreated, `{}`))
		inst, _ := p.instance("r", "plan-1")
		_, loc, _ := p.bindApp(p.app("web"), inst)
		Eventually(p.jobState(loc)).Should(Equal("COMPLETE"))
		status, _, _ := sendJSON(p.cc, "DELETE", "/v3/service_instances/"+inst+"?purge=true", "", p.tok)
		Expect(status).To(Equal(http.StatusNoContent))
		_, ok := p.cc.Foundation().Instance(inst)
		Expect(ok).To(BeFalse())
		_, list := get(p.cc, "/v3/service_credential_bindings", p.tok)
		Expect(list["resources"]).To(BeEmpty())
		Expect(p.broker.requests("DELETE")).To(BeEmpty())
	})

	DescribeTable("deprovisions after a provision that failed as CC's client mitigates",
		func(status int, body string, mitigated bool) {
			p.broker.answer("PUT", reply(status, body))
			inst, state := p.instance("r", "plan-1")
			Expect(state).To(Equal("FAILED"))
			if mitigated {
				Eventually(deletes).Should(Equal([]string{"/v2/service_instances/" + inst + "?true,plan-1,svc-1"}))
			} else {
				Consistently(deletes, 300*time.Millisecond).Should(BeEmpty())
			}
		},
		Entry("500", http.StatusInternalServerError, `{"description":"boom"}`, true),
		Entry("422 without a known error", http.StatusUnprocessableEntity, `{"error":"Other"}`, true),
		Entry("201 with a body not JSON", http.StatusCreated, `not json`, true),
		Entry("200 with a body not JSON: not mitigated", http.StatusOK, `not json`, false),
		Entry("400: not mitigated", http.StatusBadRequest, `{}`, false),
		Entry("422 ConcurrencyError: not mitigated", http.StatusUnprocessableEntity, `{"error":"ConcurrencyError"}`, false),
	)

	It("unbinds after a bind that failed, and deprovisions a failed instance replaced by name", func() {
		p.broker.answer("PUT", reply(http.StatusCreated, `{}`))
		inst, _ := p.instance("r", "plan-1")
		p.broker.answer("PUT", reply(http.StatusBadGateway, `{}`))
		_, loc, _ := p.bindApp(p.app("web"), inst)
		Eventually(p.jobState(loc)).Should(Equal("FAILED"))
		puts := p.broker.requests("PUT")
		Eventually(deletes).Should(Equal([]string{puts[len(puts)-1].path + "?true,plan-1,svc-1"}))

		p.broker.answer("PUT", reply(http.StatusBadRequest, `{}`)) // refused: no mitigation
		failed, _ := p.instance("again", "plan-1")
		p.broker.answer("PUT", reply(http.StatusCreated, `{}`))
		p.instance("again", "plan-1")
		Eventually(deletes).Should(ContainElement("/v2/service_instances/" + failed + "?true,plan-1,svc-1"))
	})
})

var _ = Describe("methods", func() {
	It("answers 405 for a method Rails does not know, 404 for a known one a path does not take, and UAA's 405", func() {
		f := newFixture()
		req, err := http.NewRequest("FOO", f.cc.URL()+"/v3/service_instances", nil)
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Authorization", "bearer "+f.tok)
		status, body := do(req)
		Expect(status).To(Equal(http.StatusMethodNotAllowed))
		Expect(body).To(BeNil())
		status, _, out := sendJSON(f.cc, "PUT", "/v3/service_instances", "{}", f.tok)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(cfError(out)["title"]).To(Equal("CF-NotFound"))
		status, body = get(f.cc, "/login/oauth/token", "")
		Expect(status).To(Equal(http.StatusMethodNotAllowed))
		Expect(body).To(Equal(map[string]any{"error": "method_not_allowed", "error_description": "Request method 'GET' is not supported"}))
	})
})

var _ = Describe("operations and tokens", func() {
	It("starts a new last operation (created_at) for each operation, as save_with_new_operation does", func() {
		p := newPlatform()
		p.broker.answer("PUT", reply(http.StatusCreated, `{}`))
		p.broker.answer("PATCH", reply(http.StatusOK, `{}`))
		guid, _ := p.instance("r", "plan-1")
		Expect(p.cc.Foundation().SetLastOperation(guid, sim.LastOperation{Type: sim.OpUpdate, State: sim.StateSucceeded,
			CreatedAt: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)})).To(Succeed())
		status, loc := p.patch(guid, `{"parameters":{"a":1}}`)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(p.jobState(loc)).Should(Equal("COMPLETE"))
		in, _ := p.cc.Foundation().Instance(guid)
		Expect(in.LastOperation.CreatedAt.Year()).To(BeNumerically(">", 2020))
	})

	It("answers the refresh_token grant as UAA does for a client-credentials client: no refresh token issued, the grant unauthorized", func() {
		cc := start(sim.Options{})
		status, body := token(cc, sim.DefaultClientID, sim.DefaultClientSecret)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body).NotTo(HaveKey("refresh_token"))
		req, err := http.NewRequest("POST", cc.URL()+"/login/oauth/token", strings.NewReader("grant_type=refresh_token&refresh_token=x"))
		Expect(err).NotTo(HaveOccurred())
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(sim.DefaultClientID, sim.DefaultClientSecret)
		status, body = do(req)
		Expect(status).To(Equal(http.StatusUnauthorized))
		Expect(body).To(Equal(map[string]any{"error": "invalid_client", "error_description": "Unauthorized grant type: refresh_token"}))
	})
})
