package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	ccsim "github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// brokerGate stands between the Cloud Controller simulator and the daemon:
// it passes every request on and notes the deprovisions and unbinds; while
// losing is set it passes a provision on, waits for the daemon to finish
// it, then answers the platform 502 instead (a gateway that lost the
// broker's answer: the orphan CC's mitigation is for).
type brokerGate struct {
	srv    *httptest.Server
	daemon *url.URL

	mu      sync.Mutex
	losing  bool
	deletes []string // method path?query of each DELETE
}

var provisionPath = regexp.MustCompile(`^/v2/service_instances/[^/]+$`)

func newBrokerGate(daemonURL string) *brokerGate {
	target, err := url.Parse(daemonURL)
	Expect(err).NotTo(HaveOccurred())
	g := &brokerGate{daemon: target}
	proxy := httputil.NewSingleHostReverseProxy(target)
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		losing := g.losing && r.Method == http.MethodPut && provisionPath.MatchString(r.URL.Path)
		if r.Method == http.MethodDelete {
			g.deletes = append(g.deletes, r.URL.Path+"?"+r.URL.RawQuery)
		}
		g.mu.Unlock()
		if !losing {
			proxy.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		g.awaitProvision(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = io.WriteString(w, `{"description":"the gateway lost the broker's answer"}`)
	}))
	DeferCleanup(g.srv.Close)
	return g
}

// awaitProvision waits until the daemon's last_operation for the provision
// r started is no longer in progress (failing the spec after a minute).
func (g *brokerGate) awaitProvision(r *http.Request) {
	defer GinkgoRecover() // a handler's goroutine
	Eventually(func(gm Gomega) string {
		req, err := http.NewRequest(http.MethodGet, g.daemon.String()+r.URL.Path+"/last_operation", nil)
		gm.Expect(err).NotTo(HaveOccurred())
		req.Header = r.Header.Clone()
		res, err := http.DefaultClient.Do(req)
		gm.Expect(err).NotTo(HaveOccurred())
		defer res.Body.Close()
		var lo struct{ State string }
		_ = json.NewDecoder(res.Body).Decode(&lo)
		return lo.State
	}).WithTimeout(time.Minute).WithPolling(100*time.Millisecond).ShouldNot(Equal("in progress"), "the provision behind the lost answer")
}

func (g *brokerGate) lose(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.losing = on
}

func (g *brokerGate) deleted() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.deletes...)
}

// directorDeployments are the names of the Director simulator's deployments.
func directorDeployments() []string {
	GinkgoHelper()
	req, err := http.NewRequest(http.MethodGet, directorURL+"/deployments", nil)
	Expect(err).NotTo(HaveOccurred())
	req.SetBasicAuth(simUser, simPass)
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	var deps []struct{ Name string }
	Expect(json.NewDecoder(res.Body).Decode(&deps)).To(Succeed())
	var names []string
	for _, dep := range deps {
		names = append(names, dep.Name)
	}
	return names
}

// platformRun is the daemon's cross-check after a run it asked for: the
// platform section of GET /b/reconcile.
func platformRun(d *daemon) map[string]any {
	GinkgoHelper()
	d.reconcile()
	code, body := d.get("/b/reconcile", opUser, opPass)
	Expect(code).To(Equal(http.StatusOK), body)
	p, _ := decode(body)["platform"].(map[string]any)
	Expect(p).To(HaveKeyWithValue("state", "known"), body)
	return p
}

// listedIDs are the instance ids of a platform report's list.
func listedIDs(p map[string]any, list string) []string {
	var ids []string
	for _, x := range p[list].([]any) {
		ids = append(ids, x.(map[string]any)["instance_id"].(string))
	}
	return ids
}

// expectInStep checks that the daemon's cross-check finds the instance
// on the platform with the plan the platform shows, deployed, and in
// neither list of differences.
func expectInStep(d *daemon, guid, planID, why string) {
	GinkgoHelper()
	p := platformRun(d)
	Expect(p["counts"]).To(HaveKeyWithValue("in_step", BeNumerically(">=", 1)), why)
	Expect(listedIDs(p, "platform_only")).NotTo(ContainElement(guid), why)
	Expect(listedIDs(p, "orphan_deployments")).NotTo(ContainElement(guid), why)
	code, body := d.get("/b/instances/"+guid, opUser, opPass)
	Expect(code).To(Equal(http.StatusOK), body)
	view := decode(body)
	Expect(view["deployment"]).NotTo(BeNil(), why+": deployed")
	Expect(view["platform"]).To(And(HaveKeyWithValue("view", "known"),
		HaveKeyWithValue("record", HaveKeyWithValue("plan_id", planID))), why)
}

var _ = Describe("the platform and the daemon in step, as the cross-check sees them", func() {
	var (
		cc    *ccsim.CC
		tok   string
		d     *daemon
		gate  *brokerGate
		space ccsim.Space
		plans map[string]string // platform plan guid by catalog id
	)
	BeforeEach(func() {
		var err error
		cc, err = ccsim.New(ccsim.Options{PollInterval: 200 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(cc.Close)
		d = startDaemon(fmt.Sprintf("cf:\n  api: %s\n  client_id: %s\n  client_secret: %s\n  broker_name: daemon\n",
			cc.URL(), ccsim.DefaultClientID, ccsim.DefaultClientSecret))
		gate = newBrokerGate(d.url)
		space, err = cc.Foundation().AddSpace(cc.Foundation().AddOrg("org").GUID, "space")
		Expect(err).NotTo(HaveOccurred())
		tok = ccToken(cc)
		status, location, body := ccCall(cc, tok, "POST", "/v3/service_brokers", map[string]any{
			"name": "daemon", "url": gate.srv.URL,
			"authentication": map[string]any{"type": "basic", "credentials": map[string]any{"username": brokerUser, "password": brokerPass}},
		})
		Expect(status).To(Equal(http.StatusAccepted), "%v", body)
		Expect(jobEnds(cc, tok, location)).To(Equal("COMPLETE"))
		plans = map[string]string{}
		for _, p := range cc.Foundation().Plans() {
			plans[p.CatalogID] = p.GUID
		}
	})
	create := func(name, plan string) (string, string) {
		GinkgoHelper()
		status, location, body := ccCall(cc, tok, "POST", "/v3/service_instances", map[string]any{
			"type": "managed", "name": name, "parameters": map[string]any{},
			"relationships": map[string]any{"space": map[string]any{"data": map[string]any{"guid": space.GUID}},
				"service_plan": map[string]any{"data": map[string]any{"guid": plans[plan]}}},
		})
		Expect(status).To(Equal(http.StatusAccepted), "%v", body)
		state := jobEnds(cc, tok, location)
		_, _, list := ccCall(cc, tok, "GET", "/v3/service_instances?names="+name, nil)
		resources, _ := list["resources"].([]any)
		Expect(resources).To(HaveLen(1))
		return resources[0].(map[string]any)["guid"].(string), state
	}
	patch := func(guid string, body map[string]any, why string) {
		GinkgoHelper()
		status, location, out := ccCall(cc, tok, "PATCH", "/v3/service_instances/"+guid, body)
		Expect(status).To(Equal(http.StatusAccepted), "%v", out)
		Expect(jobEnds(cc, tok, location)).To(Equal("COMPLETE"), why)
	}

	It("provisions, binds an app, updates, upgrades and deletes, the cross-check in step after each", func() {
		guid, state := create("in-step", "redis-small")
		Expect(state).To(Equal("COMPLETE"), "the daemon provisioned it")
		expectInStep(d, guid, "redis-small", "after the create")

		status, _, app := ccCall(cc, tok, "POST", "/v3/apps", map[string]any{"name": "web",
			"relationships": map[string]any{"space": map[string]any{"data": map[string]any{"guid": space.GUID}}}})
		Expect(status).To(Equal(http.StatusCreated), "%v", app)
		status, location, body := ccCall(cc, tok, "POST", "/v3/service_credential_bindings", map[string]any{"type": "app",
			"relationships": map[string]any{"service_instance": map[string]any{"data": map[string]any{"guid": guid}},
				"app": map[string]any{"data": map[string]any{"guid": app["guid"]}}}})
		Expect(status).To(Equal(http.StatusAccepted), "%v", body)
		Expect(jobEnds(cc, tok, location)).To(Equal("COMPLETE"), "the daemon bound the app")
		_, _, bindings := ccCall(cc, tok, "GET", "/v3/service_credential_bindings?type=app&app_guids="+app["guid"].(string), nil)
		Expect(bindings["resources"]).To(HaveLen(1))
		binding := bindings["resources"].([]any)[0].(map[string]any)["guid"].(string)
		code, view := d.get("/b/instances/"+guid, opUser, opPass)
		Expect(code).To(Equal(http.StatusOK))
		Expect(view).To(ContainSubstring(binding), "the daemon's record holds the platform's binding")
		expectInStep(d, guid, "redis-small", "after the bind")

		patch(guid, map[string]any{"parameters": map[string]any{}}, "the daemon updated the parameters")
		expectInStep(d, guid, "redis-small", "after the parameters' update")
		patch(guid, map[string]any{"relationships": map[string]any{"service_plan": map[string]any{"data": map[string]any{"guid": plans["redis-large"]}}}},
			"the daemon changed the plan")
		expectInStep(d, guid, "redis-large", "after the plan change")

		var version string
		for _, p := range cc.Foundation().Plans() {
			if p.CatalogID == "redis-large" {
				version = p.MaintenanceVersion
			}
		}
		Expect(version).NotTo(BeEmpty(), "the catalog's maintenance_info")
		Expect(cc.Foundation().SetInstanceMaintenanceVersion(guid, "0.0.1")).To(Succeed()) // made before the catalog's last version
		_, _, before := ccCall(cc, tok, "GET", "/v3/service_instances/"+guid, nil)
		Expect(before).To(HaveKeyWithValue("upgrade_available", true))
		patch(guid, map[string]any{"maintenance_info": map[string]any{"version": version}}, "the daemon upgraded it (cf upgrade-service)")
		_, _, after := ccCall(cc, tok, "GET", "/v3/service_instances/"+guid, nil)
		Expect(after).To(And(HaveKeyWithValue("upgrade_available", false),
			HaveKeyWithValue("maintenance_info", HaveKeyWithValue("version", version))))
		expectInStep(d, guid, "redis-large", "after the upgrade")

		status, location, body = ccCall(cc, tok, "DELETE", "/v3/service_instances/"+guid, nil)
		Expect(status).To(Equal(http.StatusAccepted), "%v", body)
		Expect(jobEnds(cc, tok, location)).To(Equal("COMPLETE"), "the daemon unbound the app and deprovisioned it")
		Expect(gate.deleted()).To(HaveLen(2), "the app's unbind, then the deprovision")
		Expect(gate.deleted()[0]).To(ContainSubstring("/service_bindings/" + binding + "?"))
		p := platformRun(d)
		Expect(listedIDs(p, "platform_only")).NotTo(ContainElement(guid))
		Expect(listedIDs(p, "orphan_deployments")).NotTo(ContainElement(guid))
		Expect(directorDeployments()).NotTo(ContainElement("redis-large-"+guid), "the deployment deleted")
		code, view = d.get("/b/instances/"+guid, opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), view)
		Expect(decode(view)).To(HaveKeyWithValue("record", BeNil()), "the daemon's record gone with the deployment, its history kept")
	})

	It("mitigates a provision whose answer was lost: the daemon is sent the deprovision and leaves no orphan deployment", func() {
		gate.lose(true)
		guid, state := create("lost", "redis-small")
		gate.lose(false)
		Expect(state).To(Equal("FAILED"), "the platform saw a 502")
		_, _, in := ccCall(cc, tok, "GET", "/v3/service_instances/"+guid, nil)
		Expect(in["last_operation"]).To(And(HaveKeyWithValue("type", "create"), HaveKeyWithValue("state", "failed")))
		Eventually(gate.deleted).WithTimeout(30*time.Second).Should(ContainElement(
			"/v2/service_instances/"+guid+"?accepts_incomplete=true&plan_id=redis-small&service_id=redis"), "CC's orphan mitigation")
		Eventually(directorDeployments).WithTimeout(60*time.Second).WithPolling(200*time.Millisecond).ShouldNot(
			ContainElement("redis-small-"+guid), "the daemon deleted the deployment it had made")
		code, body := d.get("/b/instances/"+guid, opUser, opPass)
		Expect(code).To(Equal(http.StatusOK), body)
		Expect(body).To(ContainSubstring(`"deprovision"`), "the daemon's record of the deprovision")
		p := platformRun(d)
		Expect(listedIDs(p, "orphan_deployments")).NotTo(ContainElement(guid))
		Expect(listedIDs(p, "platform_only")).NotTo(ContainElement(guid), "a failed create is the platform's to forget")
	})
})
