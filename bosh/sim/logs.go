package sim

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// maxResources is how many log tarballs the simulator keeps for
// GET /resources/:id; older ones are dropped.
const maxResources = 100

// logsTarget is what a fetch-logs task packs.
type logsTarget struct {
	instances []instance
	types     string
}

// blobs are the logs tarballs fetch-logs tasks pack, which the Director
// keeps in its blobstore for GET /resources/:id.
type blobs struct {
	db      *store
	deploys *deploys
	board   *taskBoard
	runner  *runner
}

// getLogs is GET /deployments/:name/jobs/:job/:index_or_id/logs?type=&filters=
// ("*" for any group or instance): a "fetch logs" task whose result is the
// blobstore id of a tarball of the instances' logs (GET /resources/:id).
func (bl *blobs) getLogs(w http.ResponseWriter, r *http.Request, user string) {
	name, group, which := r.PathValue("name"), r.PathValue("job"), r.PathValue("index_or_id")
	if which != "*" && !instanceArg(w, which) {
		return
	}
	bl.db.mu.Lock()
	dep, ok := bl.deploys.deploymentLocked(w, name)
	if !ok {
		bl.db.mu.Unlock()
		return
	}
	if _, err := strconv.Atoi(which); err == nil && findInstance(dep, group, which) == nil {
		bl.db.mu.Unlock()
		writeError(w, http.StatusNotFound, codeInstanceNotFound, "'%s/%s/%s' doesn't exist", name, group, which)
		return
	}
	types := or(r.URL.Query().Get("type"), "job")
	for _, typ := range strings.Split(types, ",") {
		if typ != "agent" && typ != "job" && typ != "system" {
			bl.db.mu.Unlock()
			writeError(w, http.StatusBadRequest, codeValidationType, "Invalid log type '%s': agent, job or system", typ)
			return
		}
	}
	var picked []instance
	matched := false
	for _, in := range instancesOf(dep) {
		if (group == "*" || in.job == group) && (which == "*" || in.id == which || strconv.Itoa(in.index) == which) {
			matched = true
			if in.expectsVM {
				picked = append(picked, in)
			}
		}
	}
	switch {
	case !matched:
		bl.db.mu.Unlock()
		writeError(w, http.StatusNotFound, codeInstanceNotFound, "No instances matched %s", instanceFilter(name, group, which))
		return
	case len(picked) == 0: // a plain error in the Director: a bare 500
		bl.db.mu.Unlock()
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	t := bl.board.newTaskLocked(kindLogs, "fetch logs", name, user, r.Header.Get("X-Bosh-Context-Id"))
	t.logs = &logsTarget{instances: picked, types: types}
	bl.db.mu.Unlock()
	bl.runner.startTask(t)
	bl.board.redirectToTask(w, t.id)
}

// instanceFilter writes a logs request's filter as the Director's error does.
func instanceFilter(name, group, which string) string {
	parts := []string{fmt.Sprintf(":deployment=>%q", name)}
	if group != "*" {
		parts = append(parts, fmt.Sprintf(":job=>%q", group))
	}
	if which != "*" {
		parts = append(parts, fmt.Sprintf(":uuid=>%q", which))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// logStages are the steps of a fetch-logs task: one per instance, then the
// packing of them all when there are several.
func logStages(l *logsTarget) []stage {
	var out []stage
	for _, in := range l.instances {
		out = append(out, stage{stage: fmt.Sprintf("Fetching logs for %s (%d)", in.name(), in.index),
			task: "Finding and packing log files", tags: []string{}, index: 1, total: 1})
	}
	if len(l.instances) > 1 {
		out = append(out, stage{stage: "Fetching group of logs", task: "Packing log files together",
			tags: []string{}, index: 1, total: 1})
	}
	return out
}

// storeLogsLocked packs the instances' logs into a tarball kept as a
// resource, and returns its blobstore id.
func (bl *blobs) storeLogsLocked(l *logsTarget) string {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	now := time.Now().UTC()
	for _, in := range l.instances {
		for _, typ := range strings.Split(l.types, ",") {
			for _, j := range in.group.jobs {
				body := fmt.Sprintf("%s [%s] %s/%d simulated %s log of job %s on %s\n",
					now.Format(time.RFC3339), in.agentID, in.job, in.index, typ, j.name, in.cid)
				_ = tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("./%s.%s/%s/%s.%s.log", in.job, in.id, j.name, j.name, typ),
					Mode: 0o644, Size: int64(len(body)), ModTime: now})
				_, _ = tw.Write([]byte(body))
			}
		}
	}
	_ = tw.Close()
	_ = gz.Close()
	id := newUUID()
	if bl.db.resources == nil {
		bl.db.resources = map[string][]byte{}
	}
	bl.db.resources[id] = buf.Bytes()
	bl.db.resourceOrder = append(bl.db.resourceOrder, id)
	if len(bl.db.resourceOrder) > maxResources {
		delete(bl.db.resources, bl.db.resourceOrder[0])
		bl.db.resourceOrder = slices.Delete(bl.db.resourceOrder, 0, 1)
	}
	return id
}

// getResource is GET /resources/:id: a blob the Director keeps, here a logs
// tarball (the Director has nginx send it; the simulator sends it itself).
func (bl *blobs) getResource(w http.ResponseWriter, r *http.Request, _ string) {
	id := r.PathValue("id")
	bl.db.mu.RLock()
	blob, ok := bl.db.resources[id]
	bl.db.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, codeResourceNotFound, "Resource '%s' not found in the blobstore", id)
		return
	}
	w.Header().Set("Content-Type", "application/x-gzip")
	w.Header().Set("Content-Length", strconv.Itoa(len(blob)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(blob)
}

// codeResourceNotFound is ResourceNotFound.
const codeResourceNotFound = 100002
