package sim_test

import (
	"net/http"
	"net/http/httptest"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

const catalogJSON = `{"services":[{"id":"svc-1","name":"redis","description":"Redis","bindable":true,
"plans":[{"id":"plan-1","name":"small","description":"Small","free":false,"maintenance_info":{"version":"2.0.0"}}]}]}`

// send makes a request with a JSON body and a token; it returns the status and Location.
func send(cc *sim.CC, method, path, body, tok string) (int, string, any) {
	req, err := http.NewRequest(method, cc.URL()+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Authorization", "bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	Expect(res.Body.Close()).To(Succeed())
	return res.StatusCode, res.Header.Get("Location"), nil
}

var _ = Describe("service broker writes", func() {
	var (
		cc      *sim.CC
		tok     string
		headers http.Header
		answer  func(w http.ResponseWriter)
		broker  *httptest.Server
	)
	BeforeEach(func() {
		cc = start(sim.Options{})
		tok = mustToken(cc)
		answer = func(w http.ResponseWriter) { _, _ = w.Write([]byte(catalogJSON)) }
		broker = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			headers = r.Header.Clone()
			if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "pw" || r.URL.Path != "/v2/catalog" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			answer(w)
		}))
		DeferCleanup(broker.Close)
	})
	create := func(name, url string) (int, string) {
		status, loc, _ := send(cc, "POST", "/v3/service_brokers",
			`{"name":"`+name+`","url":"`+url+`","authentication":{"type":"basic","credentials":{"username":"admin","password":"pw"}}}`, tok)
		return status, loc
	}
	jobState := func(loc string) func() string {
		return func() string { _, body := get(cc, loc, tok); return body["state"].(string) }
	}

	It("answers 202 with a job that fetches the catalog with CC's headers and creates the offerings and plans", func() {
		status, loc := create("b1", broker.URL)
		Expect(status).To(Equal(http.StatusAccepted))
		Expect(loc).To(HavePrefix(cc.URL() + "/v3/jobs/"))
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		_, job := get(cc, loc, tok)
		Expect(job["operation"]).To(Equal("service_broker.catalog.synchronize"))
		Expect(job["errors"]).To(BeEmpty())
		Expect(headers.Get("X-Broker-Api-Version")).To(Equal("2.15"))
		Expect(headers.Get("X-Broker-API-Request-Identity")).NotTo(BeEmpty())
		Expect(headers.Get("X-Api-Info-Location")).To(Equal(strings.TrimPrefix(cc.URL(), "http://") + "/"))
		Expect(headers.Get("User-Agent")).To(HavePrefix("HTTPClient/1.0"))
		_, plans := get(cc, "/v3/service_plans?service_broker_names=b1", tok)
		Expect(plans["resources"]).To(HaveLen(1))
		p := plans["resources"].([]any)[0].(map[string]any)
		Expect(p["name"]).To(Equal("small"))
		Expect(p["free"]).To(BeFalse())
		Expect(p["maintenance_info"]).To(Equal(map[string]any{"version": "2.0.0"}))
		_, brokers := get(cc, "/v3/service_brokers?names=b1", tok)
		Expect(brokers["resources"].([]any)[0]).NotTo(HaveKey("authentication"))
	})

	It("refuses a duplicate name, a URL off loopback and bad authentication with 422", func() {
		status, loc := create("b1", broker.URL)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		status, _ = create("b1", broker.URL)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		status, _ = create("b2", "https://example.com")
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
		status, _, _ = send(cc, "POST", "/v3/service_brokers", `{"name":"b3","url":"`+broker.URL+`","authentication":{"type":"oauth"}}`, tok)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
	})

	DescribeTable("fails the job when the broker answers badly",
		func(a func(w http.ResponseWriter), title string) {
			answer = a
			_, loc := create("b1", broker.URL)
			Eventually(jobState(loc)).Should(Equal("FAILED"))
			_, job := get(cc, loc, tok)
			Expect(cfError(job)["title"]).To(Equal(title))
		},
		Entry("500", func(w http.ResponseWriter) { w.WriteHeader(500) }, "CF-ServiceBrokerBadResponse"),
		Entry("junk", func(w http.ResponseWriter) { _, _ = w.Write([]byte("junk")) }, "CF-ServiceBrokerRequestMalformed"),
	)

	It("deletes a broker with a job, and refuses one with instances", func() {
		_, loc := create("b1", broker.URL)
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		_, job := get(cc, loc, tok)
		self := job["links"].(map[string]any)["service_brokers"].(map[string]any)["href"].(string)
		status, del, _ := send(cc, "DELETE", strings.TrimPrefix(self, cc.URL()), "", tok)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(jobState(del)).Should(Equal("COMPLETE"))
		_, brokers := get(cc, "/v3/service_brokers?names=b1", tok)
		Expect(brokers["resources"]).To(BeEmpty())
		f := newFixture()
		status, _, _ = send(f.cc, "DELETE", "/v3/service_brokers/"+f.broker.GUID, "", f.tok)
		Expect(status).To(Equal(http.StatusUnprocessableEntity))
	})

	brokerGUID := func(loc string) string {
		_, job := get(cc, loc, tok)
		href := job["links"].(map[string]any)["service_brokers"].(map[string]any)["href"].(string)
		return href[strings.LastIndex(href, "/")+1:]
	}

	It("keeps a broker whose catalog fetch failed as SYNCHRONIZATION_FAILED", func() {
		answer = func(w http.ResponseWriter) { w.WriteHeader(500) }
		_, loc := create("b1", broker.URL)
		Eventually(jobState(loc)).Should(Equal("FAILED"))
		b, ok := cc.Foundation().Broker(brokerGUID(loc))
		Expect(ok).To(BeTrue())
		Expect(b.State).To(Equal(sim.BrokerSynchronizationFailed))
	})

	It("updates a broker with a job, and keeps it unchanged when the new credentials are refused", func() {
		_, loc := create("b1", broker.URL)
		Eventually(jobState(loc)).Should(Equal("COMPLETE"))
		guid := brokerGUID(loc)
		status, upd, _ := send(cc, "PATCH", "/v3/service_brokers/"+guid, `{"name":"b2"}`, tok)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(jobState(upd)).Should(Equal("COMPLETE"))
		status, upd, _ = send(cc, "PATCH", "/v3/service_brokers/"+guid,
			`{"authentication":{"type":"basic","credentials":{"username":"admin","password":"wrong"}}}`, tok)
		Expect(status).To(Equal(http.StatusAccepted))
		Eventually(jobState(upd)).Should(Equal("FAILED"))
		_, job := get(cc, upd, tok)
		Expect(cfError(job)["title"]).To(Equal("CF-ServiceBrokerApiAuthenticationFailed"))
		b, _ := cc.Foundation().Broker(guid)
		Expect(b.Name).To(Equal("b2"))
		Expect(b.State).To(Equal(sim.BrokerAvailable))
		status, _, _ = send(cc, "PATCH", "/v3/service_brokers/"+guid, `{}`, tok)
		Expect(status).To(Equal(http.StatusOK))
	})

	It("answers 404 for an unknown job", func() {
		status, _ := get(cc, "/v3/jobs/nope", tok)
		Expect(status).To(Equal(http.StatusNotFound))
	})
})
