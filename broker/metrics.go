package broker

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/internal/metrics"
)

// Operation names used as the operation label.
const (
	opCatalog       = "catalog"
	opProvision     = "provision"
	opDeprovision   = "deprovision"
	opUpdate        = "update"
	opGetInstance   = "get_instance"
	opLastOperation = "last_operation"
	opBind          = "bind"
	opUnbind        = "unbind"
	opGetBinding    = "get_binding"
	opBindingLastOp = "last_binding_operation"
	opReconcile     = "reconcile"
	opStatus        = "reconcile_status"
	opRuns          = "runs"
	opInstance      = "instance_view"
	opRestore       = "restore"
	opAdopt         = "adopt"
	opDashboard     = "dashboard"
	opUnknown       = "unknown"
)

var operations = []string{
	opCatalog, opProvision, opDeprovision, opUpdate, opGetInstance, opLastOperation,
	opBind, opUnbind, opGetBinding, opBindingLastOp, opReconcile, opStatus, opRuns, opInstance, opRestore, opAdopt, opDashboard, opUnknown,
}

// Metrics holds the broker's Prometheus series. Create it with NewMetrics.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	outcomes *prometheus.CounterVec
	refusals *prometheus.CounterVec
}

// NewMetrics creates the broker's series and registers them on reg (nil: not
// registered); every series without a status code starts at 0.
//
//	blacksmith_broker_requests_total{operation,code}
//	blacksmith_broker_request_duration_seconds{operation}
//	blacksmith_broker_operations_total{type,state}
//	blacksmith_broker_limit_refusals_total{limit}
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_broker_requests_total",
			Help: "Requests answered by the broker, by operation and HTTP status code.",
		}, []string{"operation", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "blacksmith_broker_request_duration_seconds",
			Help:    "Time taken to answer broker requests, by operation.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"operation"}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_broker_operations_total",
			Help: "Asynchronous operations seen to end, by type (provision, update, deprovision; bind, unbind of per_binding plans) and final state.",
		}, []string{"type", "state"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_broker_limit_refusals_total",
			Help: "Provisions refused because a plan or service limit was reached.",
		}, []string{"limit"}),
	}
	m.requests = metrics.MustRegister(reg, m.requests)
	m.duration = metrics.MustRegister(reg, m.duration)
	m.outcomes = metrics.MustRegister(reg, m.outcomes)
	m.refusals = metrics.MustRegister(reg, m.refusals)
	for _, op := range operations {
		m.duration.WithLabelValues(op)
	}
	for _, t := range []string{opTypeProvision, opTypeUpdate, opTypeDeprovision, bindOp, unbindOp} {
		for _, s := range []string{stateSucceeded, stateFailed} {
			m.outcomes.WithLabelValues(t, s)
		}
	}
	m.refusals.WithLabelValues("plan")
	m.refusals.WithLabelValues("service")
	return m
}

// request counts one answered request.
func (m *Metrics) request(op string, code int, seconds float64) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(op, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(op).Observe(seconds)
}

// outcome counts one operation that reached a final state.
func (m *Metrics) outcome(opType, state string) {
	if m == nil {
		return
	}
	m.outcomes.WithLabelValues(opType, state).Inc()
}

// refusal counts one provision refused by the plan's or the service's limit.
func (m *Metrics) refusal(limit string) {
	if m == nil {
		return
	}
	m.refusals.WithLabelValues(limit).Inc()
}
