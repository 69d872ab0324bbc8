package broker

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// MetricsHandler serves g's metrics in the Prometheus exposition format;
// behind basic auth when username is not empty, open otherwise.
func MetricsHandler(g prometheus.Gatherer, username, password string) http.Handler {
	h := promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	if username == "" {
		return h
	}
	return BasicAuth(username, password, h)
}

// HealthCheck checks one dependency; nil means healthy.
type HealthCheck func(ctx context.Context) error

// healthAnswer is the body of GET /healthz.
type healthAnswer struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// HealthHandler serves /healthz: 200 {"status":"ok"} when every check passes
// within timeout, else 503 {"status":"unavailable"}; each check says "ok" or
// its error. It needs no credentials.
func HealthHandler(checks map[string]HealthCheck, timeout time.Duration) http.Handler {
	names := make([]string, 0, len(checks))
	for n := range checks {
		names = append(names, n)
	}
	sort.Strings(names)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		ans := healthAnswer{Status: "ok", Checks: make(map[string]string, len(checks))}
		for _, n := range names {
			ans.Checks[n] = "ok"
			if err := checks[n](ctx); err != nil {
				ans.Checks[n], ans.Status = err.Error(), "unavailable"
			}
		}
		status := http.StatusOK
		if ans.Status != "ok" {
			status = http.StatusServiceUnavailable
		}
		writeJSON(w, status, ans)
	})
}
