package cf

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/internal/metrics"
)

// Route templates used as the endpoint label: never a name or a guid.
const (
	epRoot      = "/"
	epToken     = "/oauth/token"
	epBrokers   = "/v3/service_brokers"
	epPlans     = "/v3/service_plans"
	epInstances = "/v3/service_instances"
	epInstance  = "/v3/service_instances/:guid"
	epBroker    = "/v3/service_brokers/:guid"
	epJob       = "/v3/jobs/:guid"
	epVisible   = "/v3/service_plans/:guid/visibility"
	epOrgs      = "/v3/organizations"
)

var (
	endpoints   = []string{epRoot, epToken, epBrokers, epPlans, epInstances, epInstance, epBroker, epJob, epVisible, epOrgs}
	codeClasses = []string{"2xx", "3xx", "4xx", "5xx", "error"}
)

// newRequestsMetric creates (or reuses, when reg holds it already)
// blacksmith_cf_requests_total{endpoint,code_class}, every series at 0.
func newRequestsMetric(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "blacksmith_cf_requests_total",
		Help: "HTTP requests sent to the Cloud Controller (and its UAA), by route template and status class.",
	}, []string{"endpoint", "code_class"})
	c = metrics.MustRegister(reg, c)
	for _, ep := range endpoints {
		for _, class := range codeClasses {
			c.WithLabelValues(ep, class)
		}
	}
	return c
}
