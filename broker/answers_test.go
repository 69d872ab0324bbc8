package broker_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// goErrorText is more of what Go's own error text looks like (besides
// goInternals): a platform user must never read any of it.
var goErrorText = regexp.MustCompile(`\bEOF\b|json: |invalid character|cannot unmarshal|unexpected end of JSON|%!|<nil>|runtime error|goroutine|dial tcp|connection refused|context deadline|strconv\.|\*[a-z]+\.[A-Z]\w+|\bpanic\b`)

// camelCase is the spec's error code: a single word in camel case.
var camelCase = regexp.MustCompile(`^[A-Z][A-Za-z]+$`)

var _ = Describe("every error answer", func() {
	var e *env

	BeforeEach(func() { e = newEnv() })

	// send sends body as it is, with contentType ("" for none) and the
	// broker's credentials unless user is "-".
	send := func(method, path, contentType, version, user, body string) answer {
		GinkgoHelper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, e.server.URL+path, rd)
		Expect(err).NotTo(HaveOccurred())
		if user != "-" {
			req.SetBasicAuth(brokerUser, brokerPass)
		}
		if version != "" {
			req.Header.Set("X-Broker-API-Version", version)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		res, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		Expect(err).NotTo(HaveOccurred())
		a := answer{Status: res.StatusCode, Header: res.Header, Raw: string(raw)}
		_ = json.Unmarshal(raw, &a.Body)
		return a
	}
	provision := `{"service_id": "redis", "plan_id": "redis-small", "organization_guid": "o", "space_guid": "s"}`
	bind := `{"service_id": "redis", "plan_id": "redis-small", "bind_resource": {"app_guid": "app"}}`

	It("is one JSON object {error, description}: a camel-case code and a sentence with none of Go's error text", func() {
		e.provisioned("shape-1", "redis-small")
		ct := "application/json"
		cases := []struct {
			method, path, contentType, version, user, body string
			status                                         int
		}{
			{"GET", "/v2/catalog", "", "", "", "", http.StatusPreconditionFailed},
			{"GET", "/v2/catalog", "", "1.0", "", "", http.StatusPreconditionFailed},
			{"GET", "/v2/catalog", "", "2.15", "-", "", http.StatusUnauthorized},
			{"GET", "/v2/nothing", "", "2.15", "", "", http.StatusNotFound},
			{"GET", "/elsewhere", "", "2.15", "", "", http.StatusNotFound},
			{"POST", "/v2/catalog", ct, "2.15", "", "{}", http.StatusMethodNotAllowed},
			{"PUT", "/v2/service_instances/x?accepts_incomplete=true", ct, "2.15", "", `{"service_id": `, http.StatusBadRequest},
			{"PUT", "/v2/service_instances/x?accepts_incomplete=true", ct, "2.15", "", ``, http.StatusBadRequest},
			{"PUT", "/v2/service_instances/x?accepts_incomplete=true", ct, "2.15", "", `{"service_id": 5}`, http.StatusBadRequest},
			{"PUT", "/v2/service_instances/x?accepts_incomplete=true", ct, "2.15", "", `{"service_id": "redis", "plan_id": "redis-small", "organization_guid": "o", "space_guid": "s", "parameters": [1]}`, http.StatusBadRequest},
			{"PUT", "/v2/service_instances/x?accepts_incomplete=true", ct, "2.15", "", strings.Repeat(" ", 300<<10) + "{}", http.StatusRequestEntityTooLarge},
			{"PUT", "/v2/service_instances/x", ct, "2.15", "", provision, http.StatusUnprocessableEntity},
			{"PUT", "/v2/service_instances/x?accepts_incomplete=true", ct, "2.15", "", strings.Replace(provision, "redis-small", "nope", 1), http.StatusBadRequest},
			{"PUT", "/v2/service_instances/x?accepts_incomplete=true", ct, "2.15", "", strings.Replace(provision, `"o"`, `"o", "maintenance_info": {"version": "9.9.9"}`, 1), http.StatusUnprocessableEntity},
			{"PUT", "/v2/service_instances/shape-1?accepts_incomplete=true", ct, "2.15", "", strings.Replace(provision, `"s"`, `"elsewhere"`, 1), http.StatusConflict},
			{"PATCH", "/v2/service_instances/none?accepts_incomplete=true", ct, "2.15", "", `{"service_id": "redis"}`, http.StatusNotFound},
			{"PATCH", "/v2/service_instances/shape-1?accepts_incomplete=true", ct, "2.15", "", `{"service_id": "redis", "plan_id": "memo-one"}`, http.StatusBadRequest},
			{"GET", "/v2/service_instances/none", "", "2.15", "", "", http.StatusNotFound},
			{"GET", "/v2/service_instances/none/last_operation", "", "2.15", "", "", http.StatusNotFound},
			{"PUT", "/v2/service_instances/none/service_bindings/b", ct, "2.15", "", bind, http.StatusNotFound},
			{"GET", "/v2/service_instances/shape-1/service_bindings/b", "", "2.15", "", "", http.StatusNotFound},
			{"GET", "/v2/service_instances/shape-1/service_bindings/b/last_operation", "", "2.15", "", "", http.StatusNotFound},
			{"PUT", "/v2/service_instances/shape-1/service_bindings/b", ct, "2.15", "", `{"service_id": "redis"}`, http.StatusBadRequest},
			{"DELETE", "/v2/service_instances/shape-1?accepts_incomplete=true&plan_id=redis-small", "", "2.15", "", "", http.StatusBadRequest},
		}
		for _, c := range cases {
			a := send(c.method, c.path, c.contentType, c.version, c.user, c.body)
			what := c.method + " " + c.path + " " + c.body[:min(len(c.body), 80)]
			Expect(a.Status).To(Equal(c.status), "%s: %s", what, a.Raw)
			Expect(a.Header.Get("Content-Type")).To(Equal("application/json"), what)
			var body map[string]any
			Expect(json.Unmarshal([]byte(a.Raw), &body)).To(Succeed(), "%s: %s", what, a.Raw)
			Expect(body).To(HaveLen(2), "%s: %s", what, a.Raw)
			Expect(body["error"]).To(MatchRegexp(camelCase.String()), "%s: %s", what, a.Raw)
			Expect(body["description"]).To(BeAssignableToTypeOf(""), what)
			Expect(body["description"]).NotTo(BeEmpty(), what)
			Expect(body["description"]).NotTo(MatchRegexp(goErrorText.String()), "%s: %s", what, a.Raw)
			Expect(body["description"]).NotTo(MatchRegexp(goInternals), "%s: %s", what, a.Raw)
		}
	})

	It("keeps the spec's code where it names one", func() {
		a := send("PUT", "/v2/service_instances/x", "application/json", "2.15", "", provision)
		Expect(a.Body).To(HaveKeyWithValue("error", "AsyncRequired"))
		a = send("GET", "/v2/catalog", "", "", "", "")
		Expect(a.Body).To(HaveKeyWithValue("error", "PreconditionFailed"))
	})

	It("is {} for 410 Gone, as the spec has it", func() {
		e.provisioned("gone-1", "redis-small")
		a := send("DELETE", "/v2/service_instances/gone-1/service_bindings/never?service_id=redis&plan_id=redis-small", "", "2.15", "", "")
		Expect(a.Status).To(Equal(http.StatusGone))
		Expect(a.Raw).To(MatchJSON(`{}`))
	})
})

var _ = Describe("a request body", func() {
	var e *env

	BeforeEach(func() { e = newEnv() })

	DescribeTable("is read as JSON whatever its Content-Type says, on bind as on provision",
		func(contentType string) {
			e.provisioned("ct-1", "redis-small")
			for _, r := range []struct{ method, path, body string }{
				{"PUT", "/v2/service_instances/ct-2?accepts_incomplete=true", `{"service_id": "redis", "plan_id": "redis-small", "organization_guid": "o", "space_guid": "s"}`},
				{"PUT", "/v2/service_instances/ct-1/service_bindings/b1", `{"service_id": "redis", "plan_id": "redis-small", "bind_resource": {"app_guid": "app"}}`},
			} {
				req, err := http.NewRequest(r.method, e.server.URL+r.path, strings.NewReader(r.body))
				Expect(err).NotTo(HaveOccurred())
				req.SetBasicAuth(brokerUser, brokerPass)
				req.Header.Set("X-Broker-API-Version", "2.15")
				if contentType != "" {
					req.Header.Set("Content-Type", contentType)
				}
				res, err := http.DefaultClient.Do(req)
				Expect(err).NotTo(HaveOccurred())
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				Expect(res.StatusCode).To(BeElementOf(http.StatusCreated, http.StatusAccepted), "%s %s: %s", r.method, r.path, raw)
			}
		},
		Entry("none", ""),
		Entry("a form's (curl -d sends it)", "application/x-www-form-urlencoded"),
		Entry("text", "text/plain"),
	)

	It("never takes accepts_incomplete from a form body", func() {
		req, err := http.NewRequest("PUT", e.server.URL+"/v2/service_instances/ct-3", strings.NewReader("accepts_incomplete=true"))
		Expect(err).NotTo(HaveOccurred())
		req.SetBasicAuth(brokerUser, brokerPass)
		req.Header.Set("X-Broker-API-Version", "2.15")
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		res, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusBadRequest), "not a JSON object")
		Expect(e.record("ct-3")).To(BeNil())
	})
})
