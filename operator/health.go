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
// or "unavailable"; a request carrying the credentials of one of the users
// (the operator's) gets the error text instead, which may name internal
// addresses. The failures are in the operator's log (debug level: load
// balancers probe often); log nil means slog.Default().
func HealthHandler(checks map[string]HealthCheck, timeout time.Duration, users []basicauth.User, log *slog.Logger) http.Handler {
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
		detail := basicauth.RoleOf(r, users) != basicauth.None
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

// Cached makes each check answer, whatever the number of callers, from one
// call of it per every: a result younger than every is answered as it is,
// and callers that come while the check runs wait for that one call (run
// with its own timeout, so that a caller that hangs up cancels nobody's).
// Anyone may probe /healthz: this keeps anonymous probes from reaching the
// Director or Vault more than once per every each. now tells the time.
func Cached(checks map[string]HealthCheck, every, timeout time.Duration, now func() time.Time) map[string]HealthCheck {
	out := make(map[string]HealthCheck, len(checks))
	for name, check := range checks {
		c := &cachedCheck{check: check, every: every, timeout: timeout, now: now}
		out[name] = c.call
	}
	return out
}

// cachedCheck is one check behind Cached.
type cachedCheck struct {
	check          HealthCheck
	every, timeout time.Duration
	now            func() time.Time

	mu      sync.Mutex
	at      time.Time     // when the last result came (zero: none yet)
	err     error         // the last result
	running chan struct{} // closed when the call under way ends; nil when none
}

// call answers the last result when it is younger than every, else the
// result of the call under way (starting one when none is).
func (c *cachedCheck) call(ctx context.Context) error {
	c.mu.Lock()
	if !c.at.IsZero() && c.now().Sub(c.at) < c.every {
		err := c.err
		c.mu.Unlock()
		return err
	}
	if c.running == nil {
		c.running = make(chan struct{})
		go c.refresh(c.running)
	}
	running := c.running
	c.mu.Unlock()
	select {
	case <-running:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// refresh calls the check and keeps its result.
func (c *cachedCheck) refresh(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	err := c.check(ctx)
	c.mu.Lock()
	c.err, c.at, c.running = err, c.now(), nil
	c.mu.Unlock()
	close(done)
}

// LiveHandler serves /livez: 200 {"status":"ok"} while the process serves
// requests, whatever its dependencies say (a load balancer's liveness
// probe; /healthz is its readiness).
func LiveHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		httpjson.Write(w, http.StatusOK, map[string]string{"status": "ok"})
	})
}
