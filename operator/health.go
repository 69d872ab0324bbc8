package operator

import (
	"context"
	"log/slog"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpjson"

	"github.com/blacksmith-reconciler/blacksmith/internal/basicauth"
)

// HealthCheck checks one dependency; nil means healthy.
type HealthCheck func(ctx context.Context) error

// healthAnswer is the body of GET /healthz.
type healthAnswer struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// HealthHandler serves /healthz: 200 {"status":"ok"} when every check passes
// within timeout (the checks run at once), else 503 {"status":"unavailable"}. Each check says "ok"
// or "unavailable"; a request carrying the given basic-auth credentials
// (the broker's) gets the error text instead, which may name internal
// addresses. The failures are in the operator's log (debug level: load
// balancers probe often); log nil means slog.Default().
func HealthHandler(checks map[string]HealthCheck, timeout time.Duration, username, password string, log *slog.Logger) http.Handler {
	names := make([]string, 0, len(checks))
	for n := range checks {
		names = append(names, n)
	}
	sort.Strings(names)
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		detail := username != "" && basicauth.Authorized(r, username, password)
		ans := healthAnswer{Status: "ok", Checks: make(map[string]string, len(checks))}
		errs := make([]error, len(names))
		var wg sync.WaitGroup
		for i, n := range names { // at once: a dependency that hangs takes no other's time
			wg.Go(func() { errs[i] = checks[n](ctx) })
		}
		wg.Wait()
		for i, n := range names {
			ans.Checks[n] = "ok"
			if err := errs[i]; err != nil {
				ans.Checks[n], ans.Status = "unavailable", "unavailable"
				log.Debug("health check failed", "check", n, "error", err)
				if detail {
					ans.Checks[n] = err.Error()
				}
			}
		}
		status := http.StatusOK
		if ans.Status != "ok" {
			status = http.StatusServiceUnavailable
		}
		httpjson.Write(w, status, ans)
	})
}
