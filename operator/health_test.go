package operator_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/basicauth"
	"github.com/blacksmith-reconciler/blacksmith/operator"
)

var _ = Describe("HealthHandler", func() {
	It("answers 200 when every check passes and 503 naming the failing one otherwise, its error only to the operator's credentials", func() {
		failing := errors.New("dial tcp 10.0.0.9:8200: vault is sealed")
		var vaultErr error
		h := operator.HealthHandler(map[string]operator.HealthCheck{
			"vault":    func(context.Context) error { return vaultErr },
			"director": func(context.Context) error { return nil },
		}, time.Second, []basicauth.User{{Username: "admin", Password: "pw", Role: basicauth.Viewer}}, nil)
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

	It("runs the checks at once: a dependency that hangs until the timeout does not fail the others", func() {
		hang := func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
		h := operator.HealthHandler(map[string]operator.HealthCheck{
			"director":      hang, // sorted first: in turn, the others would get no time left
			"director-west": func(ctx context.Context) error { return ctx.Err() },
			"vault":         func(ctx context.Context) error { return ctx.Err() },
		}, 200*time.Millisecond, nil, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		Expect(rec.Code).To(Equal(http.StatusServiceUnavailable))
		Expect(rec.Body.String()).To(ContainSubstring(`"director": "unavailable"`))
		Expect(rec.Body.String()).To(ContainSubstring(`"director-west": "ok"`))
		Expect(rec.Body.String()).To(ContainSubstring(`"vault": "ok"`))
	})
})

var _ = Describe("Cached", func() {
	It("calls each check once for all the callers that come within the interval, and again after it", func() {
		var calls atomic.Int32
		release := make(chan struct{})
		checks := operator.Cached(map[string]operator.HealthCheck{
			"director": func(context.Context) error { calls.Add(1); <-release; return errors.New("down") },
		}, time.Hour, time.Second, time.Now)
		errs := make(chan error, 40)
		for range 40 {
			go func() { errs <- checks["director"](context.Background()) }()
		}
		Eventually(calls.Load).Should(BeEquivalentTo(1))
		Consistently(calls.Load).WithTimeout(100 * time.Millisecond).Should(BeEquivalentTo(1))
		close(release)
		for range 40 {
			Expect(<-errs).To(MatchError("down"))
		}
		Expect(checks["director"](context.Background())).To(MatchError("down"))
		Expect(calls.Load()).To(BeEquivalentTo(1), "a result younger than the interval is answered as it is")

		clock := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		fresh := operator.Cached(map[string]operator.HealthCheck{
			"vault": func(context.Context) error { calls.Add(1); return nil },
		}, 10*time.Second, time.Second, func() time.Time { return clock })
		Expect(fresh["vault"](context.Background())).To(Succeed())
		clock = clock.Add(9 * time.Second)
		Expect(fresh["vault"](context.Background())).To(Succeed())
		Expect(calls.Load()).To(BeEquivalentTo(2), "a result younger than the interval is answered as it is")
		clock = clock.Add(2 * time.Second)
		Expect(fresh["vault"](context.Background())).To(Succeed())
		Expect(calls.Load()).To(BeEquivalentTo(3), "an older result is checked again")
	})

	It("lets a caller that hangs up go without cancelling the call the others wait for", func() {
		release := make(chan struct{})
		checks := operator.Cached(map[string]operator.HealthCheck{
			"vault": func(ctx context.Context) error {
				select {
				case <-release:
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			},
		}, time.Hour, 5*time.Second, time.Now)
		gone, cancel := context.WithCancel(context.Background())
		cancel()
		Expect(checks["vault"](gone)).To(MatchError(context.Canceled))
		waiting := make(chan error, 1)
		go func() { waiting <- checks["vault"](context.Background()) }()
		close(release)
		Eventually(waiting).Should(Receive(BeNil()))
	})
})
