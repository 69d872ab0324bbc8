package broker

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// TestErrorBodyHidesWhatIsNotTheBrokers: an error answer without a code
// (brokerapi's, for an error that is no FailureResponse or a body it
// could not read) reaches the platform user as a sentence, never as Go's
// text; one with a code keeps its description.
func TestErrorBodyHidesWhatIsNotTheBrokers(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		status      int
		body        string
		code, desc  string
		keepsOrigin bool
	}{
		{http.StatusUnprocessableEntity, `{"description": "json: cannot unmarshal number into Go struct field BindDetails.service_id of type string"}`, "UnprocessableEntity", "", false},
		{http.StatusInternalServerError, `{"description": "dial tcp 127.0.0.1:8200: connect: connection refused"}`, "InternalServerError", "", false},
		{http.StatusBadGateway, `not json at all`, "BadGateway", "", false},
		{http.StatusNotFound, `404 page not found`, "NotFound", "", false},
		{http.StatusBadRequest, `{"description": "service_id missing"}`, "BadRequest", "service_id missing", true},
		{http.StatusUnprocessableEntity, `{"error": "ConcurrencyError", "description": "an update is in progress"}`, "ConcurrencyError", "an update is in progress", true},
		{http.StatusInternalServerError, `{"error": "InternalError", "description": "could not read the record; the broker's log has the details"}`, "InternalError", "could not read the record; the broker's log has the details", true},
	} {
		next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(c.status)
			_, _ = io.WriteString(w, c.body)
		})
		rec := httptest.NewRecorder()
		shapeAnswers(quiet, next).ServeHTTP(rec, httptest.NewRequest("GET", "/v2/catalog", nil))
		var got map[string]string
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%d %s: not JSON: %q", c.status, c.body, rec.Body.String())
		}
		if rec.Code != c.status || len(got) != 2 || got["error"] != c.code || got["description"] == "" {
			t.Fatalf("%d %s: got %d %v", c.status, c.body, rec.Code, got)
		}
		if c.keepsOrigin && got["description"] != c.desc {
			t.Fatalf("%d %s: description %q, want %q", c.status, c.body, got["description"], c.desc)
		}
		if !c.keepsOrigin && got["description"] == c.body {
			t.Fatalf("%d %s: Go's text reached the user", c.status, c.body)
		}
	}
}

// TestRetryAfterGrowsWithTheOperation: the plan's interval at first, a
// tenth of the time run later, at most five minutes (or the interval).
func TestRetryAfterGrowsWithTheOperation(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		interval int
		ran      time.Duration
		want     int
	}{
		{0, 0, catalog.DefaultPollingInterval},
		{0, 30 * time.Second, catalog.DefaultPollingInterval},
		{0, 20 * time.Minute, 120},
		{5, 3 * time.Hour, maxRetryAfter},
		{600, 3 * time.Hour, 600},
		{7, -time.Minute, 7}, // a clock that went back: the interval
	} {
		got := retryAfter(catalog.Plan{PollingInterval: c.interval}, now.Add(-c.ran), now)
		if got != c.want {
			t.Fatalf("interval %d, ran %s: %d, want %d", c.interval, c.ran, got, c.want)
		}
	}
	if got := retryAfter(catalog.Plan{}, time.Time{}, now); got != catalog.DefaultPollingInterval {
		t.Fatalf("unknown start: %d", got)
	}
}
