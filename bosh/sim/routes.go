package sim

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// handler serves an endpoint; user is who made the request ("" when the
// endpoint needs no authentication).
type handler func(w http.ResponseWriter, r *http.Request, user string)

// route is an endpoint of the Director API.
type route struct {
	method, path string // path in ServeMux form: /deployments/{name}
	public       bool   // served without authentication
	h            handler
}

// controllers are the first path segments the Director mounts; unknown routes
// under them are authenticated before they are refused.
var controllers = map[string]bool{"info": true, "deployments": true, "tasks": true, "task": true,
	"releases": true, "stemcells": true, "configs": true, "locks": true, "events": true, "resources": true,
	"cloud_configs": true, "runtime_configs": true, "cpi_configs": true}

// maxContextID is the longest X-Bosh-Context-Id the Director accepts.
const maxContextID = 64

func (d *Director) endpoints() []route {
	rs := []route{
		{"GET", "/info", true, d.getInfo},
		{"GET", "/deployments", false, d.listDeployments},
		{"POST", "/deployments", false, d.postDeployment},
		{"GET", "/deployments/{name}", false, d.getDeployment},
		{"DELETE", "/deployments/{name}", false, d.deleteDeployment},
		{"POST", "/deployments/{name}/diff", false, d.postDiff},
		{"GET", "/deployments/{name}/vms", false, d.getVMs},
		{"GET", "/deployments/{name}/instances", false, d.getInstances},
		{"PUT", "/deployments/{name}/jobs/{job}", false, d.putJobState},
		{"PUT", "/deployments/{name}/jobs/{job}/{index_or_id}", false, d.putJobState},
		{"GET", "/deployments/{name}/jobs/{job}/{index_or_id}/logs", false, d.getLogs},
		{"GET", "/deployments/{name}/variables", false, d.getVariables},
		{"PUT", "/deployments/{name}/scan_and_fix", false, d.putScanAndFix},
		{"GET", "/resources/{id}", false, d.getResource},
		{"GET", "/tasks", false, d.listTasks},
		{"GET", "/tasks/{id}", false, d.getTask},
		{"GET", "/tasks/{id}/output", false, d.getTaskOutput},
		{"DELETE", "/task/{id}", false, d.deleteTask},
		{"GET", "/releases", false, d.listReleases},
		{"GET", "/stemcells", false, d.listStemcells},
		{"GET", "/configs", false, d.listConfigs},
		{"GET", "/configs/{id}", false, d.getConfig},
		{"GET", "/cloud_configs", false, d.listTypedConfigs(cloudConfigKind)},
		{"POST", "/cloud_configs", false, d.postTypedConfig(cloudConfigKind)},
		{"POST", "/cloud_configs/diff", false, d.diffTypedConfig(cloudConfigKind)},
		{"GET", "/runtime_configs", false, d.listTypedConfigs(runtimeConfigKind)},
		{"POST", "/runtime_configs", false, d.postTypedConfig(runtimeConfigKind)},
		{"POST", "/runtime_configs/diff", false, d.diffTypedConfig(runtimeConfigKind)},
		{"GET", "/cpi_configs", false, d.listTypedConfigs(cpiConfigKind)},
		{"POST", "/cpi_configs", false, d.postTypedConfig(cpiConfigKind)},
		{"POST", "/cpi_configs/diff", false, d.diffTypedConfig(cpiConfigKind)},
		{"GET", "/locks", false, d.listLocks},
		{"GET", "/events", false, d.listEvents},
	}
	if d.opts.Auth == AuthUAA {
		rs = append(rs, route{"POST", "/oauth/token", true, d.issueToken})
	}
	return rs
}

func (d *Director) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range d.endpoints() {
		mux.Handle(rt.method+" "+rt.path, d.serve(rt))
	}
	d.adminRoutes(mux)
	mux.Handle("/", d.serve(route{h: d.unknownRoute}))
	return mux
}

// template is a route's path as stats and failures name it: /deployments/:name.
func template(path string) string {
	return strings.NewReplacer("{", ":", "}", "").Replace(path)
}

// serve wraps an endpoint: counting, latency, injected failures,
// authentication and the context id check, in the order a client sees them.
func (d *Director) serve(rt route) http.Handler {
	routeTmpl := template(rt.path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method, tmpl, public := rt.method, routeTmpl, rt.public
		if method == "" { // the catch-all for unknown routes
			method, tmpl = r.Method, "(unknown)"
			public = !controllers[strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 2)[0]]
		}
		d.counts.begin(method + " " + tmpl)
		defer d.counts.end()
		if !sleep(r.Context(), d.knobs.latency()) || !d.injectFailure(w, r, tmpl) {
			return
		}
		user := ""
		if !public {
			var ok bool
			if user, ok = d.authorize(w, r); !ok {
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

func (d *Director) unknownRoute(w http.ResponseWriter, r *http.Request, _ string) {
	endpointNotFound(w, r)
}

// injectFailure applies the first injected failure that picks this request;
// it reports whether the request is still to be answered normally.
func (d *Director) injectFailure(w http.ResponseWriter, r *http.Request, tmpl string) bool {
	f, ok := d.knobs.pick(r.Method, tmpl, r.PathValue("name"))
	if !ok {
		return true
	}
	if f.Delay > 0 && !sleep(r.Context(), f.Delay) {
		return false
	}
	if f.Status == 0 && f.Delay > 0 {
		return true // only slow
	}
	w.Header().Set("Content-Length", "0")
	w.WriteHeader(or0(f.Status, http.StatusInternalServerError))
	return false
}

// sleep waits for dur or until ctx ends; it reports whether it waited
// the whole time.
func sleep(ctx context.Context, dur time.Duration) bool {
	if dur <= 0 {
		return true
	}
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func or0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}
