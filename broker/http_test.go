package broker_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/broker"
)

var _ = Describe("HTTP", func() {
	var e *env

	BeforeEach(func() { e = newEnv() })

	It("serves the catalog, with plan_updateable when a plan is updatable", func() {
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
		e.director.SetTaskDuration(time.Second)
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

	It("answers /b/reconcile with 503 when no reconciler is wired", func() {
		Expect(e.request("POST", "/b/reconcile", nil).Status).To(Equal(http.StatusServiceUnavailable))
	})
})

var _ = Describe("MetricsHandler", func() {
	It("is open without credentials and asks for them when configured", func() {
		reg := prometheus.NewRegistry()
		broker.NewMetrics(reg)
		open := httptest.NewServer(broker.MetricsHandler(reg, "", ""))
		DeferCleanup(open.Close)
		res, err := http.Get(open.URL)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusOK))

		guarded := httptest.NewServer(broker.MetricsHandler(reg, "prom", "pw"))
		DeferCleanup(guarded.Close)
		res, err = http.Get(guarded.URL)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusUnauthorized))
		req, _ := http.NewRequest("GET", guarded.URL, nil)
		req.SetBasicAuth("prom", "pw")
		res, err = http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusOK))
	})
})

var _ = Describe("HealthHandler", func() {
	It("answers 200 when every check passes and 503 naming the failing one otherwise, its error only to the broker's credentials", func() {
		failing := errors.New("dial tcp 10.0.0.9:8200: vault is sealed")
		var vaultErr error
		h := broker.HealthHandler(map[string]broker.HealthCheck{
			"vault":    func(context.Context) error { return vaultErr },
			"director": func(context.Context) error { return nil },
		}, time.Second, "admin", "pw", nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		Expect(rec.Code).To(Equal(http.StatusOK))
		Expect(rec.Body.String()).To(ContainSubstring(`"status": "ok"`))

		vaultErr = failing
		rec = httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		Expect(rec.Code).To(Equal(http.StatusServiceUnavailable))
		Expect(rec.Body.String()).To(ContainSubstring(`"vault": "unavailable"`))
		Expect(rec.Body.String()).NotTo(ContainSubstring("10.0.0.9"))
		Expect(rec.Body.String()).To(ContainSubstring(`"director": "ok"`))

		for _, creds := range [][2]string{{"admin", "wrong"}, {"admin", "pw"}} {
			req := httptest.NewRequest("GET", "/healthz", nil)
			req.SetBasicAuth(creds[0], creds[1])
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			Expect(rec.Code).To(Equal(http.StatusServiceUnavailable))
			if creds[1] == "pw" {
				Expect(rec.Body.String()).To(ContainSubstring(`"vault": "dial tcp 10.0.0.9:8200: vault is sealed"`))
			} else {
				Expect(rec.Body.String()).NotTo(ContainSubstring("10.0.0.9"))
			}
		}
	})
})
