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

// deploys are the Director's deployments: created, updated and deleted
// through tasks (POST and DELETE /deployments) or at once (the seeds,
// PutDeployment, RemoveDeployment), their manifests, their variables and
// the cached GET /deployments listing.
type deploys struct {
	db        *store
	rec       *recorder
	configs   *configBook
	artifacts *artifacts
	board     *taskBoard
	runner    *runner
	seedPlans []SeedPlan // Options.SeedPlans, what seed draws from by default
	director  string     // Options.Name, in the variables' names
}

// getDeployment is GET /deployments/:name: the manifest exactly as posted
// ("" while a first deploy has not succeeded).
func (dp *deploys) getDeployment(w http.ResponseWriter, r *http.Request, _ string) {
	if text, ok := dp.manifestOf(w, r.PathValue("name")); ok {
		writeJSON(w, http.StatusOK, manifestView{Manifest: text})
	}
}

// manifestOf is the manifest of the deployment a route names; it answers
// 70000 when there is none.
func (dp *deploys) manifestOf(w http.ResponseWriter, name string) (string, bool) {
	dp.db.mu.RLock()
	dep, ok := dp.db.deployments[name]
	var text string
	if ok {
		text = dep.manifestText()
	}
	dp.db.mu.RUnlock()
	if !ok {
		deploymentNotFound(w, name)
	}
	return text, ok
}

// postDeployment is POST /deployments (Content-Type text/yaml): a task that
// creates or updates the deployment the manifest names. A manifest without
// a name is refused at once (400); any other invalid manifest makes the
// task end in error. Like the Director, it records a new deployment at once.
func (dp *deploys) postDeployment(w http.ResponseWriter, r *http.Request, user string) {
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
	if err := dp.configs.checkDiffContext(r.URL.Query().Get("context")); err != nil {
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
	dp.db.mu.Lock()
	t := dp.board.newTaskLocked(kindDeploy, desc, name, user, r.Header.Get("X-Bosh-Context-Id"))
	t.manifest, t.doc, t.content, t.refusal, t.dryRun = text, doc, c, refusal, dryRun
	t.action = "update" // "create" when the deployment is new, decided when the deploy is accepted
	if _, ok := dp.db.deployments[name]; !ok {
		t.action = "create"
	}
	if name != "" { // even for a dry run, as the Director's DeploymentRepo does
		dp.placeholderLocked(name)
	}
	dp.db.mu.Unlock()
	dp.runner.startTask(t)
	dp.board.redirectToTask(w, t.id)
}

// deleteDeployment is DELETE /deployments/:name: a task; a deployment that
// does not exist is answered 404 (70000) before any task, as the Director's
// controller looks it up first.
func (dp *deploys) deleteDeployment(w http.ResponseWriter, r *http.Request, user string) {
	name := r.PathValue("name")
	dp.db.mu.Lock()
	if _, ok := dp.db.deployments[name]; !ok {
		dp.db.mu.Unlock()
		deploymentNotFound(w, name)
		return
	}
	t := dp.board.newTaskLocked(kindDelete, "delete deployment "+name, name, user, r.Header.Get("X-Bosh-Context-Id"))
	t.action = "delete"
	dp.db.mu.Unlock()
	dp.runner.startTask(t)
	dp.board.redirectToTask(w, t.id)
}

// deploymentLocked is the deployment a route names; it answers 70000 when
// there is none.
func (dp *deploys) deploymentLocked(w http.ResponseWriter, name string) (*deployment, bool) {
	dep, ok := dp.db.deployments[name]
	if !ok {
		deploymentNotFound(w, name)
	}
	return dep, ok
}
