package sim

import (
	"net/http"
	"strings"
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

// endpoints are the Director API's routes, each served by the part that
// holds its resource.
func (d *Director) endpoints() []route {
	rs := []route{
		{"GET", "/info", true, d.gate.getInfo},
		{"GET", "/deployments", false, d.deploys.listDeployments},
		{"POST", "/deployments", false, d.deploys.postDeployment},
		{"GET", "/deployments/{name}", false, d.deploys.getDeployment},
		{"DELETE", "/deployments/{name}", false, d.deploys.deleteDeployment},
		{"POST", "/deployments/{name}/diff", false, d.configs.postDiff},
		{"GET", "/deployments/{name}/vms", false, d.vms.getVMs},
		{"GET", "/deployments/{name}/instances", false, d.vms.getInstances},
		{"PUT", "/deployments/{name}/jobs/{job}", false, d.vms.putJobState},
		{"PUT", "/deployments/{name}/jobs/{job}/{index_or_id}", false, d.vms.putJobState},
		{"GET", "/deployments/{name}/jobs/{job}/{index_or_id}/logs", false, d.blobs.getLogs},
		{"GET", "/deployments/{name}/variables", false, d.deploys.getVariables},
		{"PUT", "/deployments/{name}/scan_and_fix", false, d.health.putScanAndFix},
		{"GET", "/deployments/{name}/errands", false, d.errands.listErrands},
		{"POST", "/deployments/{name}/errands/{errand_name}/runs", false, d.errands.postRun},
		{"GET", "/resources/{id}", false, d.blobs.getResource},
		{"GET", "/tasks", false, d.board.listTasks},
		{"GET", "/tasks/{id}", false, d.board.getTask},
		{"GET", "/tasks/{id}/output", false, d.board.getTaskOutput},
		{"DELETE", "/task/{id}", false, d.board.deleteTask},
		{"GET", "/releases", false, d.artifacts.listReleases},
		{"GET", "/stemcells", false, d.artifacts.listStemcells},
		{"GET", "/configs", false, d.configs.listConfigs},
		{"GET", "/configs/{id}", false, d.configs.getConfig},
		{"GET", "/cloud_configs", false, d.configs.listTypedConfigs(cloudConfigKind)},
		{"POST", "/cloud_configs", false, d.configs.postTypedConfig(cloudConfigKind)},
		{"POST", "/cloud_configs/diff", false, d.configs.diffTypedConfig(cloudConfigKind)},
		{"GET", "/runtime_configs", false, d.configs.listTypedConfigs(runtimeConfigKind)},
		{"POST", "/runtime_configs", false, d.configs.postTypedConfig(runtimeConfigKind)},
		{"POST", "/runtime_configs/diff", false, d.configs.diffTypedConfig(runtimeConfigKind)},
		{"GET", "/cpi_configs", false, d.configs.listTypedConfigs(cpiConfigKind)},
		{"POST", "/cpi_configs", false, d.configs.postTypedConfig(cpiConfigKind)},
		{"POST", "/cpi_configs/diff", false, d.configs.diffTypedConfig(cpiConfigKind)},
		{"GET", "/locks", false, d.runner.listLocks},
		{"GET", "/events", false, d.rec.listEvents},
	}
	if d.opts.Auth == AuthUAA {
		rs = append(rs, route{"POST", "/oauth/token", true, d.gate.issueToken})
	}
	return rs
}

// routes registers every route: the Director API behind the gate, the
// admin API under /_sim/ beside it.
func (d *Director) routes() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range d.endpoints() {
		mux.Handle(rt.method+" "+rt.path, d.gate.serve(rt))
	}
	d.admin.routes(mux)
	mux.Handle("/", d.gate.serve(route{h: unknownRoute}))
	return mux
}

// template is a route's path as stats and failures name it: /deployments/:name.
func template(path string) string {
	return strings.NewReplacer("{", ":", "}", "").Replace(path)
}

// unknownRoute answers a route the Director does not have.
func unknownRoute(w http.ResponseWriter, r *http.Request, _ string) {
	endpointNotFound(w, r)
}
