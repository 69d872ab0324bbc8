package bosh

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpkit"
	"github.com/blacksmith-reconciler/blacksmith/internal/metrics"
)

// Route templates used as the endpoint label: never a deployment name or a task id.
const (
	epInfo        = "/info"
	epDeployments = "/deployments"
	epDeployment  = "/deployments/:name"
	epVMs         = "/deployments/:name/vms"
	epInstances   = "/deployments/:name/instances"
	epDiff        = "/deployments/:name/diff"
	epJobs        = "/deployments/:name/jobs/:job"
	epErrandRuns  = "/deployments/:name/errands/:errand/runs"
	epTasks       = "/tasks"
	epTask        = "/tasks/:id"
	epTaskOutput  = "/tasks/:id/output"
	epEvents      = "/events"
	epReleases    = "/releases"
	epStemcells   = "/stemcells"
	epToken       = "/oauth/token"
)

// routes lists the method and endpoint of every request the client makes,
// so that their series start at 0.
var routes = [][2]string{
	{"GET", epInfo}, {"GET", epDeployments}, {"POST", epDeployments},
	{"GET", epDeployment}, {"DELETE", epDeployment}, {"GET", epVMs},
	{"GET", epInstances}, {"POST", epDiff}, {"PUT", epJobs}, {"POST", epErrandRuns}, {"GET", epTasks}, {"GET", epTask},
	{"GET", epTaskOutput}, {"GET", epEvents}, {"GET", epReleases},
	{"GET", epStemcells}, {"POST", epToken},
}

// Code classes of the code_class label; "error" is a request without an answer.
var codeClasses = []string{"2xx", "3xx", "4xx", "5xx", "error"}

// Metrics holds the Prometheus counters of one or more clients. Create it
// once per registry with NewMetrics and pass it in Options.Metrics of every
// client; the director label keeps the clients apart.
type Metrics struct {
	requests     *prometheus.CounterVec
	tasksCreated *prometheus.CounterVec
}

// NewMetrics creates the client's counters and registers them on reg
// (nil: not registered). When reg already holds them, the registered ones are used.
//
//	blacksmith_bosh_requests_total{director,method,endpoint,code_class}
//	blacksmith_bosh_tasks_created_total{director}
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_bosh_requests_total",
			Help: "HTTP requests sent to a BOSH Director (and its UAA), by route template and status class.",
		}, []string{"director", "method", "endpoint", "code_class"}),
		tasksCreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_bosh_tasks_created_total",
			Help: "Director tasks created by deploy and delete requests.",
		}, []string{"director"}),
	}
	m.requests = metrics.MustRegister(reg, m.requests)
	m.tasksCreated = metrics.MustRegister(reg, m.tasksCreated)
	return m
}

// init starts every series of a director at 0.
func (m *Metrics) init(director string) {
	if m == nil {
		return
	}
	for _, r := range routes {
		for _, class := range codeClasses {
			m.requests.WithLabelValues(director, r[0], r[1], class)
		}
	}
	m.tasksCreated.WithLabelValues(director)
}

// request counts one request; status 0 means it got no answer.
func (m *Metrics) request(director, method, endpoint string, status int) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(director, method, endpoint, codeClass(status)).Inc()
}

// taskCreated counts one task created on director.
func (m *Metrics) taskCreated(director string) {
	if m == nil {
		return
	}
	m.tasksCreated.WithLabelValues(director).Inc()
}

// codeClass turns 404 into "4xx", and 0 into "error" (httpkit.CodeClass).
var codeClass = httpkit.CodeClass
