package sim

import (
	"net/http"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// gate is what every request of the Director API goes through before its
// handler: counting, latency, injected failures, authentication (basic or
// a token of the built-in UAA, which it issues too) and the context id
// check; GET /info, which names the caller, is its too.
type gate struct {
	opts   Options
	url    string // the Director's base URL, the issuer of its tokens
	counts *counters
	knobs  *Knobs
	faults *Faults
	tokens signer
}

// serve wraps an endpoint: counting, latency, injected failures,
// authentication and the context id check, in the order a client sees them.
func (g *gate) serve(rt route) http.Handler {
	routeTmpl := template(rt.path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, tmpl, public := rt.method, routeTmpl, rt.public
		if method == "" { // the catch-all for unknown routes
			method, tmpl = r.Method, "(unknown)"
			public = !controllers[strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]]
		}
		g.counts.begin(method + " " + tmpl)
		defer g.counts.end()
		if !simkit.Sleep(r.Context(), g.knobs.latency()) || !g.injectFailure(w, r, tmpl) {
			return
		}
		user := ""
		if !public {
			var ok bool
			if user, ok = g.authorize(w, r); !ok {
				return
			}
		}
		if len(r.Header.Get("X-Bosh-Context-Id")) > maxContextID {
			writeError(w, http.StatusBadRequest, codeContextIDTooLong,
				"X-Bosh-Context-Id cannot be more than %d characters in length", maxContextID)
			return
		}
		rt.h(w, r, user)
	})
}

// injectFailure applies the first injected failure that picks this request;
// it reports whether the request is still to be answered normally.
func (g *gate) injectFailure(w http.ResponseWriter, r *http.Request, tmpl string) bool {
	f, ok := g.faults.set.Pick(r.Method, tmpl, r.PathValue("name"))
	if !ok {
		return true
	}
	if f.Delay > 0 && !simkit.Sleep(r.Context(), f.Delay) {
		return false
	}
	if f.Status == 0 && f.Delay > 0 {
		return true // only slow
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(or0(f.Status, http.StatusInternalServerError))
	return false
}

func or0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
