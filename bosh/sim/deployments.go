package sim

import (
	"errors"
	"io"
	"mime"
	"net/http"
)

// maxManifest is the largest manifest the simulator reads.
const maxManifest = 8 << 20

type manifestView struct {
	Manifest string `json:"manifest"`
}

// getDeployment is GET /deployments/:name: the manifest exactly as posted
// ("" while a first deploy has not succeeded).
func (d *Director) getDeployment(w http.ResponseWriter, r *http.Request, _ string) {
	if text, ok := d.manifestOf(w, r.PathValue("name")); ok {
		writeJSON(w, http.StatusOK, manifestView{Manifest: text})
	}
}

// manifestOf is the manifest of the deployment a route names; it answers
// 70000 when there is none.
func (d *Director) manifestOf(w http.ResponseWriter, name string) (string, bool) {
	d.mu.RLock()
	dep, ok := d.deployments[name]
	var text string
	if ok {
		text = dep.manifestText()
	}
	d.mu.RUnlock()
	if !ok {
		deploymentNotFound(w, name)
	}
	return text, ok
}

// postDeployment is POST /deployments (Content-Type text/yaml): a task that
// creates or updates the deployment the manifest names. A manifest without
// a name is refused at once (400); any other invalid manifest makes the
// task end in error. Like the Director, it records a new deployment at once.
func (d *Director) postDeployment(w http.ResponseWriter, r *http.Request, user string) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "text/yaml" {
		endpointNotFound(w, r) // the Director's route only consumes YAML
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxManifest))
	if err != nil {
		writeError(w, http.StatusBadRequest, codeValidationType, "Reading the manifest: %v", err)
		return
	}
	text := string(body)
	name, doc, refusal := parseManifest(text)
	if errors.Is(refusal, errMissingName) {
		writeError(w, http.StatusBadRequest, codeMissingField, "%s", refusal.Error())
		return
	}
	if err := d.checkDiffContext(r.URL.Query().Get("context")); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidConfigRef, "%s", err.Error())
		return
	}
	var c *content
	if doc != nil {
		c = contentOf(doc)
	}
	dryRun := r.URL.Query().Get("dry_run") == "true"
	desc := "create deployment"
	if dryRun {
		desc += " (dry run)"
	}
	d.mu.Lock()
	t := d.newTaskLocked(kindDeploy, desc, name, user, r.Header.Get("X-Bosh-Context-Id"))
	t.manifest, t.doc, t.content, t.refusal, t.dryRun = text, doc, c, refusal, dryRun
	t.action = "update" // "create" when the deployment is new, decided when the deploy is accepted
	if _, ok := d.deployments[name]; !ok {
		t.action = "create"
	}
	if name != "" { // even for a dry run, as the Director's DeploymentRepo does
		d.placeholderLocked(name)
	}
	d.mu.Unlock()
	d.startTask(t)
	d.redirectToTask(w, t.id)
}

// deleteDeployment is DELETE /deployments/:name: a task; a deployment that
// does not exist is answered 404 (70000) before any task, as the Director's
// controller looks it up first.
func (d *Director) deleteDeployment(w http.ResponseWriter, r *http.Request, user string) {
	name := r.PathValue("name")
	d.mu.Lock()
	if _, ok := d.deployments[name]; !ok {
		d.mu.Unlock()
		deploymentNotFound(w, name)
		return
	}
	t := d.newTaskLocked(kindDelete, "delete deployment "+name, name, user, r.Header.Get("X-Bosh-Context-Id"))
	t.action = "delete"
	d.mu.Unlock()
	d.startTask(t)
	d.redirectToTask(w, t.id)
}
