package operator_test

import (
	"net/http"
	"net/http/httptest"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/operator"
)

var _ = Describe("MetricsHandler", func() {
	It("is open without credentials and asks for them when configured", func() {
		reg := prometheus.NewRegistry()
		broker.NewMetrics(reg)
		open := httptest.NewServer(operator.MetricsHandler(reg, "", ""))
		DeferCleanup(open.Close)
		res, err := http.Get(open.URL)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusOK))

		guarded := httptest.NewServer(operator.MetricsHandler(reg, "prom", "pw"))
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
