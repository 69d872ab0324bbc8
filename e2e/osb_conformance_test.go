package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The Open Service Broker API's MUSTs (spec 2.14 to 2.17, written from the
// spec's text, each It naming its clause), checked over HTTP against the
// daemon with a Director simulator of its own (tasks last 1.5 s, so that
// operations are seen in progress) and a real Vault.

// osbAnswer is an answer with its JSON body.
type osbAnswer struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    string
}

// osbCall sends an OSB request: the version header (unless version is
// "-"), the broker's credentials (unless user is "-"), body as JSON
// (string bodies as they are).
type osbCall struct {
	url, user, version string
	headers            map[string]string
}

func (c osbCall) do(method, path string, body any) osbAnswer {
	GinkgoHelper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		Expect(err).NotTo(HaveOccurred())
		rd = strings.NewReader(string(data))
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	Expect(err).NotTo(HaveOccurred())
	if c.version != "-" {
		req.Header.Set("X-Broker-API-Version", c.version)
	}
	if c.user != "-" {
		req.SetBasicAuth(brokerUser, brokerPass)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	a := osbAnswer{Status: res.StatusCode, Header: res.Header, Raw: string(raw)}
	_ = json.Unmarshal(raw, &a.Body)
	return a
}

// settled polls the last_operation at path until it is no longer in
// progress (or answers other than 200) and returns its last answer.
func (c osbCall) settled(path string) osbAnswer {
	GinkgoHelper()
	var a osbAnswer
	Eventually(func() any {
		a = c.do("GET", path, nil)
		if a.Status != http.StatusOK {
			return a.Status
		}
		return a.Body["state"]
	}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).ShouldNot(Equal("in progress"))
	return a
}

// semver2 is semver.org 2.0's grammar.
var semver2 = regexp.MustCompile(`^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

var _ = Describe("OSB conformance: the spec's MUSTs over HTTP", Ordered, func() {
	const id, bid = "osb-conf-1", "osb-conf-b1"
	var (
		c           osbCall
		sim         *simProcess
		provisioned map[string]any
	)
	instance := "/v2/service_instances/" + id
	binding := instance + "/service_bindings/" + bid

	BeforeAll(func() {
		sim = startSim("-task-duration", "1500ms")
		w := newHAWorld(boshSection([]string{sim.url}))
		d := w.start("  interval: 1h\n")
		c = osbCall{url: d.url, version: "2.17"}
		provisioned = map[string]any{"service_id": "redis", "plan_id": "redis-small",
			"organization_guid": "org-conf", "space_guid": "space-conf",
			"context":          map[string]any{"platform": "cloudfoundry", "organization_guid": "org-conf", "space_guid": "space-conf"},
			"maintenance_info": map[string]any{"version": "1.0.0"}}
	})

	It("headers: a request without, with an empty or a non-2.x X-Broker-API-Version is refused 412 with the error object's description (the broker MAY; the checker expects it)", func() {
		for _, v := range []string{"-", "", "1.0"} {
			a := osbCall{url: c.url, version: v}.do("GET", "/v2/catalog", nil)
			Expect(a.Status).To(Equal(http.StatusPreconditionFailed), "version %q", v)
			Expect(a.Body["description"]).To(BeAssignableToTypeOf(""))
			Expect(a.Body["description"]).NotTo(BeEmpty())
		}
	})

	It("authentication: the broker MUST answer 401 when it fails", func() {
		Expect(osbCall{url: c.url, version: "2.17", user: "-"}.do("GET", "/v2/catalog", nil).Status).To(Equal(http.StatusUnauthorized))
	})

	It("X-Broker-API-Request-Identity is sent back (SHOULD), on success and on refusal", func() {
		with := osbCall{url: c.url, version: "2.17", headers: map[string]string{"X-Broker-API-Request-Identity": "e6e9e2c3-0000-4000-8000-000000000001"}}
		Expect(with.do("GET", "/v2/catalog", nil).Header.Get("X-Broker-API-Request-Identity")).To(Equal("e6e9e2c3-0000-4000-8000-000000000001"))
		with.version = "-"
		Expect(with.do("GET", "/v2/catalog", nil).Header.Get("X-Broker-API-Request-Identity")).To(Equal("e6e9e2c3-0000-4000-8000-000000000001"))
	})

	It("catalog: 200, every offering with id, name, description, bindable and plans; every plan with id, name, description and a semver maintenance_info.version", func() {
		a := c.do("GET", "/v2/catalog", nil)
		Expect(a.Status).To(Equal(http.StatusOK))
		services := a.Body["services"].([]any)
		Expect(services).NotTo(BeEmpty())
		for _, s := range services {
			svc := s.(map[string]any)
			Expect(svc).To(And(HaveKey("id"), HaveKey("name"), HaveKey("description"), HaveKey("bindable")))
			Expect(svc["plans"]).NotTo(BeEmpty(), "MUST contain at least one plan")
			for _, p := range svc["plans"].([]any) {
				plan := p.(map[string]any)
				Expect(plan).To(And(HaveKey("id"), HaveKey("name"), HaveKey("description")))
				mi := plan["maintenance_info"].(map[string]any)
				Expect(mi["version"]).To(MatchRegexp(semver2.String()), "maintenance_info.version MUST be semver 2.0")
			}
		}
	})

	It("provision: 422 AsyncRequired without accepts_incomplete=true (the broker only works asynchronously)", func() {
		for _, q := range []string{"", "?accepts_incomplete=false"} {
			a := c.do("PUT", instance+q, provisioned)
			Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), q)
			Expect(a.Body).To(HaveKeyWithValue("error", "AsyncRequired"))
		}
	})

	It("provision: 400 for missing mandatory data (service_id, plan_id, organization_guid, space_guid: MUST be non-empty), malformed bodies and bad ids", func() {
		for _, field := range []string{"service_id", "plan_id", "organization_guid", "space_guid"} {
			for _, empty := range []bool{true, false} {
				body := map[string]any{}
				for k, v := range provisioned {
					body[k] = v
				}
				if empty {
					body[field] = ""
				} else {
					delete(body, field)
				}
				a := c.do("PUT", instance+"?accepts_incomplete=true", body)
				Expect(a.Status).To(Equal(http.StatusBadRequest), "%s empty=%v: %s", field, empty, a.Raw)
				Expect(a.Body["description"]).To(ContainSubstring(field))
			}
		}
		for _, body := range []any{`{"service_id": "redis",`, `["redis"]`, ""} {
			Expect(c.do("PUT", instance+"?accepts_incomplete=true", body).Status).To(Equal(http.StatusBadRequest), "%v", body)
		}
		Expect(c.do("PUT", "/v2/service_instances/a%20b?accepts_incomplete=true", provisioned).Status).To(Equal(http.StatusBadRequest))
		Expect(c.do("PUT", "/v2/service_instances/"+strings.Repeat("x", 300)+"?accepts_incomplete=true", provisioned).Status).To(Equal(http.StatusBadRequest))
		code, _ := director("/deployments/redis-small-" + id)
		Expect(code).To(Equal(http.StatusNotFound), "nothing was deployed (a 4xx MUST leave the broker's resources unchanged)")
	})

	It("provision: 422 MaintenanceInfoConflict when maintenance_info.version is not the plan's; an empty object is no maintenance_info", func() {
		body := map[string]any{}
		for k, v := range provisioned {
			body[k] = v
		}
		body["maintenance_info"] = map[string]any{"version": "0.9.0"}
		a := c.do("PUT", instance+"?accepts_incomplete=true", body)
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		Expect(a.Body).To(HaveKeyWithValue("error", "MaintenanceInfoConflict"))
	})

	It("provision: 202 with an operation; a re-sent PUT MUST be 202 (same operation) until provisioned; different attributes 409; another operation meanwhile 422 ConcurrencyError; GET instance 404 while provisioning", func() {
		first := c.do("PUT", instance+"?accepts_incomplete=true", provisioned)
		Expect(first.Status).To(Equal(http.StatusAccepted), first.Raw)
		op := first.Body["operation"]
		Expect(op).NotTo(BeEmpty())
		again := c.do("PUT", instance+"?accepts_incomplete=true", provisioned)
		Expect(again.Status).To(Equal(http.StatusAccepted), again.Raw)
		Expect(again.Body["operation"]).To(Equal(op))
		other := map[string]any{}
		for k, v := range provisioned {
			other[k] = v
		}
		other["space_guid"] = "another-space"
		Expect(c.do("PUT", instance+"?accepts_incomplete=true", other).Status).To(Equal(http.StatusConflict))
		patch := c.do("PATCH", instance+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "parameters": map[string]any{"maxmemory": "128mb"}})
		Expect(patch.Status).To(Equal(http.StatusUnprocessableEntity), patch.Raw)
		Expect(patch.Body).To(HaveKeyWithValue("error", "ConcurrencyError"))
		Expect(c.do("GET", instance, nil).Status).To(Equal(http.StatusNotFound), "MUST be 404 while provisioning")
	})

	It("last_operation: 200 in progress then succeeded (an operation value the broker did not give is no error); a re-sent identical PUT is then 200", func() {
		a := c.settled(instance + "/last_operation?operation=provision&service_id=redis&plan_id=redis-small")
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(a.Body).To(HaveKeyWithValue("state", "succeeded"))
		Expect(c.do("PUT", instance+"?accepts_incomplete=true", provisioned).Status).To(Equal(http.StatusOK))
	})

	It("fetch instance: 200 with service_id and plan_id once provisioned", func() {
		a := c.do("GET", instance, nil)
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(a.Body).To(And(HaveKeyWithValue("service_id", "redis"), HaveKeyWithValue("plan_id", "redis-small")))
	})

	It("update: 400 without service_id; 422 AsyncRequired without accepts_incomplete; 202, a re-sent PATCH MUST be 202 with the same operation; another change 422 ConcurrencyError; GET instance 422 ConcurrencyError while updating", func() {
		Expect(c.do("PATCH", instance+"?accepts_incomplete=true", map[string]any{"parameters": map[string]any{}}).Status).To(Equal(http.StatusBadRequest))
		change := map[string]any{"service_id": "redis", "plan_id": "redis-small", "parameters": map[string]any{"maxmemory": "128mb"},
			"previous_values": map[string]any{"plan_id": "redis-small"}}
		a := c.do("PATCH", instance, change)
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.Body).To(HaveKeyWithValue("error", "AsyncRequired"))
		first := c.do("PATCH", instance+"?accepts_incomplete=true", change)
		Expect(first.Status).To(Equal(http.StatusAccepted), first.Raw)
		again := c.do("PATCH", instance+"?accepts_incomplete=true", change)
		Expect(again.Status).To(Equal(http.StatusAccepted), again.Raw)
		Expect(again.Body["operation"]).To(Equal(first.Body["operation"]))
		other := c.do("PATCH", instance+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "parameters": map[string]any{"maxmemory": "64mb"}})
		Expect(other.Status).To(Equal(http.StatusUnprocessableEntity))
		Expect(other.Body).To(HaveKeyWithValue("error", "ConcurrencyError"))
		get := c.do("GET", instance, nil)
		Expect(get.Status).To(Equal(http.StatusUnprocessableEntity))
		Expect(get.Body).To(HaveKeyWithValue("error", "ConcurrencyError"))
		Expect(c.settled(instance + "/last_operation?operation=update").Body).To(HaveKeyWithValue("state", "succeeded"))
		Expect(c.do("PATCH", instance+"?accepts_incomplete=true", change).Status).To(Equal(http.StatusOK), "no effect: 200")
	})

	It("update: 422 MaintenanceInfoConflict for a version the plan does not have; 400 for another service's id", func() {
		a := c.do("PATCH", instance+"?accepts_incomplete=true", map[string]any{"service_id": "redis", "maintenance_info": map[string]any{"version": "2.0.0"}})
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity), a.Raw)
		Expect(a.Body).To(HaveKeyWithValue("error", "MaintenanceInfoConflict"))
		Expect(c.do("PATCH", instance+"?accepts_incomplete=true", map[string]any{"service_id": "postgresql"}).Status).To(Equal(http.StatusBadRequest))
	})

	It("bind: 400 without service_id or plan_id; 201 with credentials; identical 200; different parameters 409; fetch binding 200; binding last_operation 200 succeeded", func() {
		for _, body := range []map[string]any{{"plan_id": "redis-small"}, {"service_id": "redis"}} {
			Expect(c.do("PUT", binding, body).Status).To(Equal(http.StatusBadRequest), "%v", body)
		}
		bind := map[string]any{"service_id": "redis", "plan_id": "redis-small", "bind_resource": map[string]any{"app_guid": "app-conf"}}
		a := c.do("PUT", binding, bind)
		Expect(a.Status).To(Equal(http.StatusCreated), a.Raw)
		Expect(a.Body["credentials"]).To(HaveKey("host"))
		Expect(c.do("PUT", binding, bind).Status).To(Equal(http.StatusOK))
		bind["bind_resource"] = map[string]any{"app_guid": "another-app"}
		Expect(c.do("PUT", binding, bind).Status).To(Equal(http.StatusConflict))
		got := c.do("GET", binding, nil)
		Expect(got.Status).To(Equal(http.StatusOK))
		Expect(got.Body["credentials"]).To(Equal(a.Body["credentials"]))
		Expect(c.do("GET", binding+"/last_operation", nil).Body).To(HaveKeyWithValue("state", "succeeded"))
	})

	It("fetch binding and binding last_operation: 404 for a binding that does not exist", func() {
		Expect(c.do("GET", instance+"/service_bindings/nope", nil).Status).To(Equal(http.StatusNotFound))
		Expect(c.do("GET", instance+"/service_bindings/nope/last_operation", nil).Status).To(Equal(http.StatusNotFound))
	})

	It("unbind: 400 without service_id or plan_id; 200 {}; 410 once gone", func() {
		Expect(c.do("DELETE", binding+"?plan_id=redis-small", nil).Status).To(Equal(http.StatusBadRequest))
		Expect(c.do("DELETE", binding+"?service_id=redis", nil).Status).To(Equal(http.StatusBadRequest))
		a := c.do("DELETE", binding+"?service_id=redis&plan_id=redis-small", nil)
		Expect(a.Status).To(Equal(http.StatusOK), a.Raw)
		Expect(a.Body).To(BeEmpty())
		Expect(c.do("DELETE", binding+"?service_id=redis&plan_id=redis-small", nil).Status).To(Equal(http.StatusGone))
	})

	It("deprovision: 400 without service_id or plan_id; 422 AsyncRequired; 202, a re-sent DELETE MUST be 202; then succeeded, remembered (SHOULD NOT forget at once); DELETE then 410", func() {
		Expect(c.do("DELETE", instance+"?accepts_incomplete=true&plan_id=redis-small", nil).Status).To(Equal(http.StatusBadRequest))
		Expect(c.do("DELETE", instance+"?accepts_incomplete=true&service_id=redis", nil).Status).To(Equal(http.StatusBadRequest))
		a := c.do("DELETE", instance+"?service_id=redis&plan_id=redis-small", nil)
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.Body).To(HaveKeyWithValue("error", "AsyncRequired"))
		first := c.do("DELETE", instance+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		Expect(first.Status).To(Equal(http.StatusAccepted), first.Raw)
		again := c.do("DELETE", instance+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		Expect(again.Status).To(Equal(http.StatusAccepted), again.Raw)
		Expect(again.Body["operation"]).To(Equal(first.Body["operation"]))
		Expect(c.settled(instance + "/last_operation?operation=deprovision").Body).To(HaveKeyWithValue("state", "succeeded"))
		code, _ := director("/deployments/redis-small-" + id)
		Expect(code).To(Equal(http.StatusNotFound))
		Expect(c.do("GET", instance+"/last_operation", nil).Body).To(HaveKeyWithValue("state", "succeeded"), "remembered")
		Expect(c.do("DELETE", instance+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil).Status).To(Equal(http.StatusGone))
		Expect(c.do("GET", instance, nil).Status).To(Equal(http.StatusNotFound))
	})

	It("last_operation: 404 for an instance that never existed (2.16 on)", func() {
		Expect(c.do("GET", "/v2/service_instances/never-was/last_operation", nil).Status).To(Equal(http.StatusNotFound))
	})

	It("orphan mitigation: after a provision whose last_operation says failed, the platform's DELETE leaves nothing behind", func() {
		const failing = "osb-conf-2"
		res, err := http.Post(sim.url+"/_sim/next-task", "application/json",
			strings.NewReader(fmt.Sprintf(`{"deployment": "redis-small-%s", "state": "error"}`, failing)))
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusNoContent))
		Expect(c.do("PUT", "/v2/service_instances/"+failing+"?accepts_incomplete=true", provisioned).Status).To(Equal(http.StatusAccepted))
		Expect(c.settled("/v2/service_instances/" + failing + "/last_operation").Body).To(HaveKeyWithValue("state", "failed"))
		del := c.do("DELETE", "/v2/service_instances/"+failing+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		Expect(del.Status).To(BeElementOf(http.StatusOK, http.StatusAccepted), del.Raw)
		if del.Status == http.StatusAccepted {
			Expect(c.settled("/v2/service_instances/" + failing + "/last_operation").Body).To(HaveKeyWithValue("state", "succeeded"))
		}
		Expect(c.do("DELETE", "/v2/service_instances/"+failing+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil).Status).
			To(Equal(http.StatusGone), "nothing left to delete")
		code, _ := simGet(sim.url, "/deployments/redis-small-"+failing)
		Expect(code).To(Equal(http.StatusNotFound), "no deployment left behind")
	})
})
