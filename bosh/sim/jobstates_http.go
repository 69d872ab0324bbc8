package sim

import (
	"io"
	"mime"
	"net/http"
	"regexp"
	"strconv"
)

// instanceIDForm is what the Director takes as an instance uuid in a route.
var instanceIDForm = regexp.MustCompile(`^[A-Fa-f0-9]{8}-[A-Fa-f0-9-]{27}$`)

// putJobState is PUT /deployments/:name/jobs/:job[/:index_or_id]?state=...
// with an empty text/yaml body, as the bosh CLI's start, stop, restart and
// recreate send it: a "create deployment" task that redeploys the stored
// manifest with the instances' new states. An unknown group changes
// nothing (the Director does not check it); an unknown instance is 404.
func (v *vms) putJobState(w http.ResponseWriter, r *http.Request, user string) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "text/yaml" {
		endpointNotFound(w, r)
		return
	}
	name, group, which := r.PathValue("name"), r.PathValue("job"), r.PathValue("index_or_id")
	q := r.URL.Query()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxManifest))
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, codeValidationType, "Reading the manifest: %v", err)
		return
	case len(body) > 0:
		writeError(w, http.StatusBadRequest, codeValidationType,
			"The simulator changes instance states with the deployment's own manifest only: send an empty body")
		return
	case q.Get("state") == "":
		writeError(w, http.StatusBadRequest, codeBadManifest, "Manifest should not be empty")
		return
	case which == "" && q.Has("recreate_vms_created_before") && q.Get("state") != "recreate": // the instance route ignores it
		writeError(w, http.StatusBadRequest, codeInvalidValue, "Must pass state=recreate when specifying recreate_vms_created_before")
		return
	}
	if which != "" && !instanceArg(w, which) {
		return
	}
	v.db.mu.Lock()
	dep, ok := v.deploys.deploymentLocked(w, name)
	if !ok {
		v.db.mu.Unlock()
		return
	}
	if which != "" && findInstance(dep, group, which) == nil {
		v.db.mu.Unlock()
		writeError(w, http.StatusNotFound, codeInstanceNotFound, "'%s/%s/%s' doesn't exist", name, group, which)
		return
	}
	desc := "create deployment"
	dryRun := q.Get("dry_run") == "true"
	if dryRun {
		desc += " (dry run)"
	}
	t := v.board.newTaskLocked(kindDeploy, desc, name, user, r.Header.Get("X-Bosh-Context-Id"))
	t.action, t.dryRun = "update", dryRun
	t.manifest, t.content = dep.manifestText(), dep.content
	t.target = &jobTarget{group: group, instance: which, state: q.Get("state")}
	v.db.mu.Unlock()
	v.runner.startTask(t)
	v.board.redirectToTask(w, t.id)
}

// instanceArg checks an instance named in a route: an index or a uuid, as
// the Director's validate_instance_index_or_id; else it answers 70002.
func instanceArg(w http.ResponseWriter, which string) bool {
	if _, err := strconv.Atoi(which); err != nil && !instanceIDForm.MatchString(which) {
		writeError(w, http.StatusBadRequest, codeInstanceInvalidIndex, "Invalid instance index or id '%s'", which)
		return false
	}
	return true
}
