package simkit_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

func TestParseFailure(t *testing.T) {
	f, err := simkit.ParseFailure("endpoint=/deployments/:name,method=GET,deployment=redis-1,rate=0.5,status=503,delay=2s,count=5,cut_short=true")
	want := simkit.Failure{Endpoint: "/deployments/:name", Method: "GET", Deployment: "redis-1", Rate: 0.5, Status: 503,
		Delay: 2 * time.Second, Count: 5, CutShort: true}
	if err != nil || f != want {
		t.Fatalf("got %+v, %v", f, err)
	}
	for _, bad := range []string{"rate=2", "status=99", "delay=-1s", "count=-1", "rate=NaN", "colour=red", "status", "rate=x"} {
		if _, err := simkit.ParseFailure(bad); !errors.Is(err, simkit.ErrBadFailure) {
			t.Errorf("%q: %v, want ErrBadFailure", bad, err)
		}
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		f                  simkit.Failure
		method, tmpl, name string
		want               bool
	}{
		{simkit.Failure{}, "GET", "/info", "", true},
		{simkit.Failure{Endpoint: "/deployments/:name"}, "DELETE", "/deployments/:name", "a", true},
		{simkit.Failure{Endpoint: "GET /deployments/:name"}, "DELETE", "/deployments/:name", "a", false},
		{simkit.Failure{Endpoint: "/deployments/:name", Method: "get"}, "GET", "/deployments/:name", "a", true},
		{simkit.Failure{Deployment: "b"}, "GET", "/deployments/:name", "a", false},
		{simkit.Failure{Endpoint: "/tasks"}, "GET", "/deployments", "", false},
	} {
		if got := c.f.Matches(c.method, c.tmpl, c.name); got != c.want {
			t.Errorf("%+v on %s %s (%s): %v, want %v", c.f, c.method, c.tmpl, c.name, got, c.want)
		}
	}
}

// FuzzParseFailure: a spec from a flag parses without panicking, and what
// it accepts is a failure Validate accepts.
func FuzzParseFailure(f *testing.F) {
	for _, s := range []string{"endpoint=/v3/service_instances,rate=0.1,status=503", "rate=1e400", "delay=9999999999h", ",,=,", "count=-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		got, err := simkit.ParseFailure(spec)
		if err == nil {
			if verr := got.Validate(); verr != nil {
				t.Fatalf("%q accepted as %+v, which Validate refuses: %v", spec, got, verr)
			}
		}
	})
}

// An answer is encoded as the simulated servers encode it: <, > and &
// left as they are, no trailing newline; Write sets the content type.
func TestAnswersAreTheServersJSON(t *testing.T) {
	body := simkit.JSON(map[string]string{"description": "a <b> & c"})
	if string(body) != `{"description":"a <b> & c"}` {
		t.Fatalf("JSON: %q", body)
	}
	rec := httptest.NewRecorder()
	simkit.Write(rec, http.StatusTeapot, "application/json; charset=utf-8", body)
	if rec.Code != http.StatusTeapot || rec.Header().Get("Content-Type") != "application/json; charset=utf-8" || rec.Body.String() != string(body) {
		t.Fatalf("Write: %d %q %q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
}
