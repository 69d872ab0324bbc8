package notify

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/internal/metrics"
)

// Results of the result label of blacksmith_webhook_deliveries_total.
const (
	resultDelivered = "delivered" // an event got a 2xx
	resultRetried   = "retried"   // an attempt failed and another follows
	resultFailed    = "failed"    // an event given up: refused for good, or out of attempts
	resultDropped   = "dropped"   // an event never delivered: queue full, or Run ended
)

// collectors are the notifier's collectors, shared by its webhooks.
type collectors struct {
	deliveries  *prometheus.CounterVec
	queueLength *prometheus.GaugeVec
	duration    prometheus.Histogram
}

// series are one webhook's series, created (at 0) once.
type series struct {
	delivered, retried, failed, dropped prometheus.Counter
	queueLength                         prometheus.Gauge
	duration                            prometheus.Observer
}

// newCollectors creates the collectors and registers them on reg (nil: not
// registered), reusing those reg already holds.
func newCollectors(reg prometheus.Registerer) *collectors {
	m := &collectors{
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_webhook_deliveries_total",
			Help: "Webhook deliveries by result: delivered and failed events, retried attempts, events dropped undelivered.",
		}, []string{"webhook", "result"}),
		queueLength: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blacksmith_webhook_queue_length",
			Help: "Events waiting to be delivered to a webhook.",
		}, []string{"webhook"}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "blacksmith_webhook_delivery_duration_seconds",
			Help:    "Duration of one webhook delivery attempt, until its answer was read or it failed.",
			Buckets: prometheus.DefBuckets,
		}),
	}
	m.deliveries = metrics.MustRegister(reg, m.deliveries)
	m.queueLength = metrics.MustRegister(reg, m.queueLength)
	m.duration = metrics.MustRegister(reg, m.duration)
	return m
}

// series returns the series of the webhook labelled webhook, each at 0.
func (m *collectors) series(webhook string) series {
	return series{
		delivered:   m.deliveries.WithLabelValues(webhook, resultDelivered),
		retried:     m.deliveries.WithLabelValues(webhook, resultRetried),
		failed:      m.deliveries.WithLabelValues(webhook, resultFailed),
		dropped:     m.deliveries.WithLabelValues(webhook, resultDropped),
		queueLength: m.queueLength.WithLabelValues(webhook),
		duration:    m.duration,
	}
}
