package operator

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/blacksmith-reconciler/blacksmith/internal/basicauth"
)

// MetricsHandler serves g's metrics in the Prometheus exposition format;
// behind basic auth when username is not empty, open otherwise.
func MetricsHandler(g prometheus.Gatherer, username, password string) http.Handler {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	if username == "" {
		return h
	}
	return basicauth.Require(username, password, h)
}
