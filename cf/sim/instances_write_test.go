package sim_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// osbRequest is what the fake broker received.
type osbRequest struct {
	method, path string
	query        map[string][]string
	header       http.Header
	body         map[string]any
}

// osbBroker is a loopback OSB broker whose answers a spec sets per method
// (PUT, PATCH, DELETE, and GET for last_operation); "GET last_operation"
// answers last_operation only, when set; a method without an answer is
// answered 200 {}.
type osbBroker struct {
	srv     *httptest.Server
	mu      sync.Mutex
	got     []osbRequest
	answers map[string]func(w http.ResponseWriter)
	catalog string
}

func newOSBBroker(catalog string) *osbBroker {
	b := &osbBroker{answers: map[string]func(http.ResponseWriter){}, catalog: catalog}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "pw" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if r.URL.Path == "/v2/catalog" {
			_, _ = w.Write([]byte(b.catalog))
			return
		}
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		b.mu.Lock()
		b.got = append(b.got, osbRequest{r.Method, r.URL.Path, r.URL.Query(), r.Header.Clone(), body})
		answer := b.answers[r.Method]
		if a, ok := b.answers[r.Method+" last_operation"]; ok && strings.HasSuffix(r.URL.Path, "/last_operation") {
			answer = a
		}
		b.mu.Unlock()
		if answer == nil { // not set by the spec: done
			answer = reply(http.StatusOK, `{}`)
		}
		answer(w)
	}))
	DeferCleanup(b.srv.Close)
	return b
}

func (b *osbBroker) answer(method string, a func(w http.ResponseWriter)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.answers[method] = a
}

func (b *osbBroker) requests(method string) []osbRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []osbRequest
	for _, r := range b.got {
		if r.method == method {
			out = append(out, r)
		}
	}
	return out
}

func reply(status int, body string, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
}

// sendJSON makes a request with a JSON body and a token; it returns the status, Location and body.
func sendJSON(cc *sim.CC, method, path, body, tok string) (int, string, map[string]any) {
	GinkgoHelper()
	req, err := http.NewRequest(method, cc.URL()+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return res.StatusCode, res.Header.Get("Location"), out
}

const instanceCatalog = `{"services":[{"id":"svc-1","name":"redis","description":"Redis","bindable":true,"plan_updateable":true,
"plans":[{"id":"plan-1","name":"small","description":"Small","maintenance_info":{"version":"2.0.0"}},
{"id":"plan-2","name":"large","description":"Large","maximum_polling_duration":1}]}]}`

var _ = Describe("service instance writes", func() {
	var (
		cc           *sim.CC
		tok          string
		broker       *osbBroker
		space        sim.Space
		org          sim.Org
		small, large sim.Plan
	)
	jobState := func(loc string) func() string {
		return func() string { _, body := get(cc, loc, tok); return body["state"].(string) }
	}
	BeforeEach(func() {
		cc = start(sim.Options{PollInterval: 20 * time.Millisecond})
		tok = mustToken(cc)
		broker = newOSBBroker(instanceCatalog)
		status, loc, _ := sendJSON(cc, "POST", "/v3/service_brokers",
			`{"name":"b1","url":"`+broker.srv.URL+`","authentication":{"type":"basic","credentials":{"username":"admin","password":"pw"}}}`, tok)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		for _, p := range cc.Foundation().Plans() {
			switch p.CatalogID {
			case "plan-1":
				small = p
			case "plan-2":
				large = p
			}
		}
		org = cc.Foundation().AddOrg("org-1")
		var err error
		space, err = cc.Foundation().AddSpace(org.GUID, "space-1")
		Expect(err).NotTo(HaveOccurred())
	})
	create := func(name, planGUID, extra string) (int, string, map[string]any) {
		return sendJSON(cc, "POST", "/v3/service_instances", `{"type":"managed","name":"`+name+`"`+extra+`,"relationships":{`+
			`"space":{"data":{"guid":"`+space.GUID+`"}},"service_plan":{"data":{"guid":"`+planGUID+`"}}}}`, tok)
	}
	instanceNamed := func(name string) map[string]any {
		_, list := get(cc, "/v3/service_instances?names="+name, tok)
		if len(list["resources"].([]any)) == 0 {
			return nil
		}
		return list["resources"].([]any)[0].(map[string]any)
	}
	lastOp := func(name string) func() map[string]any {
		return func() map[string]any { return instanceNamed(name)["last_operation"].(map[string]any) }
	}

	It("provisions at the broker with CC's body and headers, and completes the job on 201", func() {
		broker.answer("PUT", reply(http.StatusCreated, `{}`))
		status, loc, _ := create("my-redis", small.GUID, `,"parameters":{"size":3}`)
		Expect(status).To(Equal(http.StatusAccepted))
		Expect(loc).To(HavePrefix(cc.URL() + "/v3/jobs/"))
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		Expect(lastOp("my-redis")()).To(And(HaveKeyWithValue("type", "create"), HaveKeyWithValue("state", "succeeded")))
		_, job := get(cc, loc, tok)
		Expect(job["operation"]).To(Equal("service_instance.create"))
		guid := instanceNamed("my-redis")["guid"].(string)
		Expect(job["links"]).To(HaveKeyWithValue("service_instances", HaveKeyWithValue("href", cc.URL()+"/v3/service_instances/"+guid)))

		puts := broker.requests("PUT")
		Expect(puts).To(HaveLen(1))
		r := puts[0]
		Expect(r.path).To(Equal("/v2/service_instances/" + guid))
		Expect(r.query).To(Equal(map[string][]string{"accepts_incomplete": {"true"}}))
		Expect(r.body).To(HaveKeyWithValue("service_id", "svc-1"))
		Expect(r.body).To(HaveKeyWithValue("plan_id", "plan-1"))
		Expect(r.body).To(HaveKeyWithValue("organization_guid", org.GUID))
		Expect(r.body).To(HaveKeyWithValue("space_guid", space.GUID))
		Expect(r.body).To(HaveKeyWithValue("parameters", map[string]any{"size": 3.0}))
		Expect(r.body).To(HaveKeyWithValue("maintenance_info", map[string]any{"version": "2.0.0"}))
		Expect(r.body["context"]).To(And(HaveKeyWithValue("platform", "cloudfoundry"), HaveKeyWithValue("organization_name", "org-1"),
			HaveKeyWithValue("space_name", "space-1"), HaveKeyWithValue("instance_name", "my-redis"),
			HaveKeyWithValue("organization_guid", org.GUID), HaveKeyWithValue("space_guid", space.GUID)))
		Expect(r.header.Get("X-Broker-Api-Version")).To(Equal("2.15"))
		Expect(r.header.Get("X-Broker-API-Request-Identity")).NotTo(BeEmpty())
		Expect(r.header.Get("Content-Type")).To(Equal("application/json"))
		id, ok := strings.CutPrefix(r.header.Get("X-Broker-API-Originating-Identity"), "cloudfoundry ")
		Expect(ok).To(BeTrue())
		decoded, err := base64.StdEncoding.DecodeString(id)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(decoded)).To(Equal(`{"user_id":"` + sim.DefaultClientID + `"}`))
	})

	It("polls last_operation with the broker's operation until it succeeds", func() {
		broker.answer("PUT", reply(http.StatusAccepted, `{"operation":"op-1"}`))
		broker.answer("GET", reply(http.StatusOK, `{"state":"in progress","description":"creating"}`))
		_, loc, _ := create("my-redis", small.GUID, "")
		Eventually(lastOp("my-redis")).Should(And(HaveKeyWithValue("state", "in progress"), HaveKeyWithValue("description", "creating")))
		Eventually(func() int { return len(broker.requests("GET")) }).Should(BeNumerically(">=", 2))
		Expect(jobState(loc)()).To(Equal("PROCESSING"))
		broker.answer("GET", reply(http.StatusOK, `{"state":"succeeded","description":"ready"}`))
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		Expect(lastOp("my-redis")()).To(And(HaveKeyWithValue("state", "succeeded"), HaveKeyWithValue("description", "ready")))
		r := broker.requests("GET")[0]
		Expect(r.path).To(HaveSuffix("/last_operation"))
		Expect(r.query).To(Equal(map[string][]string{"operation": {"op-1"}, "plan_id": {"plan-1"}, "service_id": {"svc-1"}}))
	})

	It("fails the job as CC does when the broker says the create failed", func() {
		broker.answer("PUT", reply(http.StatusAccepted, `{}`))
		broker.answer("GET", reply(http.StatusOK, `{"state":"failed","description":"no capacity"}`))
		_, loc, _ := create("my-redis", small.GUID, "")
		Eventually(jobState(loc)).Should(Equal("FAILED"))
		_, job := get(cc, loc, tok)
		Expect(cfError(job)).To(And(HaveKeyWithValue("title", "CF-UnableToPerform"),
			HaveKeyWithValue("detail", "create managed could not be completed: no capacity")))
		Expect(lastOp("my-redis")()).To(And(HaveKeyWithValue("state", "failed"), HaveKeyWithValue("description", "no capacity")))
		Expect(broker.requests("GET")[0].query).NotTo(HaveKey("operation"))
	})

	It("fails the job with the broker's error when it refuses the provision", func() {
		broker.answer("PUT", reply(http.StatusInternalServerError, `{"description":"out of disks"}`))
		_, loc, _ := create("my-redis", small.GUID, "")
		Eventually(jobState(loc)).Should(Equal("FAILED"))
		_, job := get(cc, loc, tok)
		Expect(cfError(job)).To(And(HaveKeyWithValue("title", "CF-ServiceBrokerBadResponse"),
			HaveKeyWithValue("detail", "Service broker error: out of disks")))
		Expect(lastOp("my-redis")()).To(And(HaveKeyWithValue("state", "failed"), HaveKeyWithValue("description", "Service broker error: out of disks")))
	})

	It("gives up after the plan's maximum_polling_duration, as CC words it", func() {
		broker.answer("PUT", reply(http.StatusAccepted, `{}`))
		broker.answer("GET", reply(http.StatusOK, `{"state":"in progress"}`))
		_, loc, _ := create("slow", large.GUID, "")
		Eventually(jobState(loc), 3*time.Second).Should(Equal("FAILED"))
		_, job := get(cc, loc, tok)
		Expect(cfError(job)).To(HaveKeyWithValue("title", "CF-JobTimeout"))
		Expect(lastOp("slow")()).To(HaveKeyWithValue("description", "Service Broker failed to provision within the required time."))
	})

	It("waits as long as the broker's Retry-After asks", func() {
		broker.answer("PUT", reply(http.StatusAccepted, `{}`))
		broker.answer("GET", reply(http.StatusOK, `{"state":"in progress"}`, "Retry-After", "30"))
		create("my-redis", small.GUID, "")
		Eventually(func() int { return len(broker.requests("GET")) }).Should(Equal(1))
		Consistently(func() int { return len(broker.requests("GET")) }, 200*time.Millisecond).Should(Equal(1))
	})

	It("refuses with CC's 422 messages", func() {
		broker.answer("PUT", reply(http.StatusCreated, `{}`))
		status, _, body := create("x", "no-such-plan", "")
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(cfError(body)["detail"]).To(Equal("Invalid service plan. Ensure that the service plan exists, is available, and you have access to it."))
		status, _, body = sendJSON(cc, "POST", "/v3/service_instances", `{"type":"managed","name":"x","relationships":{`+
			`"space":{"data":{"guid":"nope"}},"service_plan":{"data":{"guid":"`+small.GUID+`"}}}}`, tok)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(cfError(body)["detail"]).To(Equal("Invalid space. Ensure that the space exists and you have access to it."))
		_, loc, _ := create("taken", small.GUID, "")
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		status, _, body = create("taken", small.GUID, "")
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		Expect(cfError(body)["detail"]).To(Equal("The service instance name is taken: taken."))
	})

	It("deletes through the broker, the instance gone when last_operation answers 410", func() {
		broker.answer("PUT", reply(http.StatusCreated, `{}`))
		_, loc, _ := create("my-redis", small.GUID, "")
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		guid := instanceNamed("my-redis")["guid"].(string)
		broker.answer("DELETE", reply(http.StatusAccepted, `{"operation":"del-1"}`))
		broker.answer("GET", reply(http.StatusGone, `{}`))
		status, del, _ := sendJSON(cc, "DELETE", "/v3/service_instances/"+guid, "", tok)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(jobState(del)).Should(Equal("COMPLETE"))
		Expect(instanceNamed("my-redis")).To(BeNil())
		r := broker.requests("DELETE")[0]
		Expect(r.path).To(Equal("/v2/service_instances/" + guid))
		Expect(r.query).To(Equal(map[string][]string{"accepts_incomplete": {"true"}, "plan_id": {"plan-1"}, "service_id": {"svc-1"}}))
		Expect(broker.requests("GET")[0].query).To(HaveKeyWithValue("operation", []string{"del-1"}))
	})

	It("keeps the instance, its delete failed, when the broker refuses the deprovision", func() {
		broker.answer("PUT", reply(http.StatusCreated, `{}`))
		_, loc, _ := create("my-redis", small.GUID, "")
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		guid := instanceNamed("my-redis")["guid"].(string)
		broker.answer("DELETE", reply(http.StatusInternalServerError, `{"description":"busy"}`))
		_, del, _ := sendJSON(cc, "DELETE", "/v3/service_instances/"+guid, "", tok)
		Eventually(jobState(del)).Should(Equal("FAILED"))
		Expect(lastOp("my-redis")()).To(And(HaveKeyWithValue("type", "delete"), HaveKeyWithValue("state", "failed"),
			HaveKeyWithValue("description", "Service instance my-redis: Service broker error: busy")))
	})

	It("renames without the broker (200), and asks it for parameters and plan changes (202) with previous_values", func() {
		broker.answer("PUT", reply(http.StatusCreated, `{}`))
		_, loc, _ := create("my-redis", small.GUID, "")
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		guid := instanceNamed("my-redis")["guid"].(string)
		status, _, body := sendJSON(cc, "PATCH", "/v3/service_instances/"+guid, `{"name":"renamed"}`, tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(body["name"]).To(Equal("renamed"))
		Expect(broker.requests("PATCH")).To(BeEmpty())

		broker.answer("PATCH", reply(http.StatusOK, `{}`))
		status, upd, _ := sendJSON(cc, "PATCH", "/v3/service_instances/"+guid,
			`{"parameters":{"a":1},"relationships":{"service_plan":{"data":{"guid":"`+large.GUID+`"}}}}`, tok)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(jobState(upd)).Should(Equal("COMPLETE"))
		Expect(lastOp("renamed")()).To(And(HaveKeyWithValue("type", "update"), HaveKeyWithValue("state", "succeeded")))
		Expect(instanceNamed("renamed")["relationships"]).To(HaveKeyWithValue("service_plan", HaveKeyWithValue("data", HaveKeyWithValue("guid", large.GUID))))
		r := broker.requests("PATCH")[0]
		Expect(r.query).To(Equal(map[string][]string{"accepts_incomplete": {"true"}}))
		Expect(r.body).To(And(HaveKeyWithValue("service_id", "svc-1"), HaveKeyWithValue("plan_id", "plan-2"),
			HaveKeyWithValue("parameters", map[string]any{"a": 1.0})))
		Expect(r.body["previous_values"]).To(Equal(map[string]any{"plan_id": "plan-1", "service_id": "svc-1",
			"organization_id": org.GUID, "space_id": space.GUID, "maintenance_info": map[string]any{"version": "2.0.0"}}))
		Expect(r.body["context"]).To(HaveKeyWithValue("instance_name", "renamed"))
	})

	It("stops polling when the simulator closes", func() {
		broker.answer("PUT", reply(http.StatusAccepted, `{}`))
		broker.answer("GET", reply(http.StatusOK, `{"state":"in progress"}`, "Retry-After", "3600"))
		create("my-redis", small.GUID, "")
		Eventually(func() int { return len(broker.requests("GET")) }).Should(Equal(1))
		done := make(chan error)
		go func() { done <- cc.Close() }()
		Eventually(done).Should(Receive(BeNil()))
	})
})
