package sim

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// Bounds on what a request may carry.
const (
	maxHeaderBytes = 64 << 10
	maxBody        = 1 << 20
)

// route is an endpoint of the simulated API.
type route struct {
	method, path string // path in ServeMux form: /v3/service_instances/{guid}
	v3           bool   // needs a bearer token (and counts against the rate limit)
	h            http.HandlerFunc
	market       bool // the marketplace: answers a request without a token unless Options.HideMarketplace
}

func (c *CC) endpoints() []route {
	return []route{
		{"GET", "/{$}", false, c.api.getRoot, false},
		{"POST", UAAPrefix + "/oauth/token", false, c.issueToken, false},
		{"POST", LoginPrefix + "/oauth/token", false, c.issueToken, false}, // where the cf CLI asks: the root's login link
		{"GET", "/v3/organizations", true, c.api.listOrgs, false},
		{"GET", "/v3/organizations/{guid}", true, c.api.getOrg, false},
		{"GET", "/v3/spaces", true, c.api.listSpaces, false},
		{"GET", "/v3/spaces/{guid}", true, c.api.getSpace, false},
		{"GET", "/v3/service_brokers", true, c.api.listBrokers, false},
		{"GET", "/v3/service_brokers/{guid}", true, c.brokers.get, false},
		{"POST", "/v3/service_brokers", true, c.brokers.create, false},
		{"PATCH", "/v3/service_brokers/{guid}", true, c.brokers.update, false},
		{"DELETE", "/v3/service_brokers/{guid}", true, c.brokers.destroy, false},
		{"GET", "/v3/jobs/{guid}", true, c.brokers.jobs.get, false},
		{"GET", "/v3/service_offerings", true, c.api.listOfferings, true},
		{"GET", "/v3/service_plans", true, c.api.listPlans, true},
		{"GET", "/v3/service_plans/{guid}/visibility", true, c.api.getVisibility, false},
		{"PATCH", "/v3/service_plans/{guid}/visibility", true, (&visibilityWrites{c.foundation}).update, false},
		{"POST", "/v3/service_plans/{guid}/visibility", true, (&visibilityWrites{c.foundation}).apply, false},
		{"DELETE", "/v3/service_plans/{guid}/visibility/{org_guid}", true, (&visibilityWrites{c.foundation}).destroy, false},
		{"GET", "/v3/service_instances", true, c.api.listInstances, false},
		{"GET", "/v3/service_instances/{guid}", true, c.api.getInstance, false},
		{"POST", "/v3/service_instances", true, c.instances.create, false},
		{"PATCH", "/v3/service_instances/{guid}", true, c.instances.update, false},
		{"DELETE", "/v3/service_instances/{guid}", true, c.instances.destroy, false},
		{"GET", "/v3/service_offerings/{guid}", true, c.api.getOffering, true},
		{"GET", "/v3/service_plans/{guid}", true, c.api.getPlan, true},
		{"GET", "/v3/service_instances/{guid}/relationships/shared_spaces", true, c.api.sharedSpaces, false},
		{"GET", "/v3/service_credential_bindings", true, c.api.listBindings, false},
		{"POST", "/v3/service_credential_bindings", true, c.keys.create, false},
		{"GET", "/v3/service_credential_bindings/{guid}", true, c.keys.get, false},
		{"GET", "/v3/service_credential_bindings/{guid}/details", true, c.keys.details, false},
		{"DELETE", "/v3/service_credential_bindings/{guid}", true, c.keys.destroy, false},
		{"GET", "/v3/feature_flags/{name}", true, c.api.getFeatureFlag, false},
		{"GET", "/v3/apps", true, c.apps.list, false},
		{"POST", "/v3/apps", true, c.apps.create, false},
		{"GET", "/v3/apps/{guid}", true, c.apps.get, false},
	}
}

func (c *CC) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range c.endpoints() {
		mux.Handle(rt.method+" "+rt.path, c.serve(rt))
	}
	c.adminRoutes(mux)
	for _, p := range []string{UAAPrefix, LoginPrefix} {
		mux.Handle(p+"/oauth/token", c.serve(route{h: tokenMethodNotAllowed}))
	}
	mux.Handle("/v3/", c.serve(route{h: unmatched}))
	mux.Handle("/", c.serve(route{h: func(w http.ResponseWriter, _ *http.Request) { writeError(w, http.StatusNotFound, errNotFound) }}))
	return mux
}

// template is a route's path as stats and failures name it: /v3/service_instances/:guid.
func template(path string) string {
	path = strings.TrimSuffix(path, "{$}")
	return strings.NewReplacer("{", ":", "}", "").Replace(path)
}

// serve wraps an endpoint: counting, latency, injected failures,
// authentication and the rate limit, in the order a client sees them.
func (c *CC) serve(rt route) http.Handler {
	tmpl := template(rt.path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, key := rt.method, tmpl
		if method == "" {
			method, key = r.Method, "(unknown)"
		}
		c.counts.begin(method + " " + key)
		defer c.counts.end()
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		if !simkit.Sleep(r.Context(), c.knobs.latency()) {
			return
		}
		f, failing := c.knobs.faults.Pick(method, key, "")
		if failing && !c.fail(w, r, f) {
			return
		}
		anonymous := rt.market && !c.opts.HideMarketplace && r.Header.Get("Authorization") == ""
		if rt.v3 && !anonymous && (!c.tokens.authenticate(w, r) || !c.knobs.limit.allow(w)) {
			return
		}
		if failing && f.CutShort {
			cutShort(w, r, rt.h)
			return
		}
		rt.h(w, r)
	})
}

// fail applies an injected failure's delay and status; it reports whether
// the request is still to be answered (slowed only, or cut short).
func (c *CC) fail(w http.ResponseWriter, r *http.Request, f Failure) bool {
	if f.Delay > 0 && !simkit.Sleep(r.Context(), f.Delay) {
		return false
	}
	if f.CutShort || (f.Status == 0 && f.Delay > 0) {
		return true
	}
	switch status := max(f.Status, 0); status {
	case 0, http.StatusInternalServerError:
		writeError(w, http.StatusInternalServerError, errUnknown)
	case http.StatusServiceUnavailable:
		writeError(w, status, errUnavailable)
	default:
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(status)
	}
	return false
}

// cutShort answers with h's headers and status and the full Content-Length,
// but only the first half of the body; net/http then closes the connection.
func cutShort(w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	h(rec, r)
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(rec.body.Len()))
	w.WriteHeader(rec.status)
	_, _ = w.Write(rec.body.Bytes()[:rec.body.Len()/2])
}

// recorder keeps what a handler answers.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
