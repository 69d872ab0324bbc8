package sim

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// taskFilter is the query of GET /tasks.
type taskFilter struct {
	states            []string
	deployment, ctxID string
	all               bool // verbose=2: vm-state tasks too
}

func (f taskFilter) matches(t *task) bool {
	return (len(f.states) == 0 || slices.Contains(f.states, t.state)) &&
		(f.deployment == "" || t.deployment == f.deployment) && (f.ctxID == "" || t.ctxID == f.ctxID) &&
		(f.all || t.kind != kindVMState)
}

// listTasks is GET /tasks?state=&deployment=&context_id=&limit=&verbose=,
// newest first.
func (tb *taskBoard) listTasks(w http.ResponseWriter, r *http.Request, _ string) {
	q := r.URL.Query()
	f := taskFilter{deployment: q.Get("deployment"), ctxID: q.Get("context_id"), all: q.Get("verbose") == "2"}
	for _, s := range strings.Split(q.Get("state"), ",") {
		if s = strings.TrimSpace(s); s != "" {
			f.states = append(f.states, s)
		}
	}
	limit := -1
	if q.Has("limit") {
		limit, _ = strconv.Atoi(q.Get("limit"))
		limit = max(limit, 1)
	}
	out := []taskView{}
	tb.db.mu.RLock()
	for i := len(tb.db.tasks) - 1; i >= 0 && len(out) != limit; i-- {
		if tb.db.tasks[i] != nil && f.matches(tb.db.tasks[i]) {
			out = append(out, tb.db.tasks[i].view())
		}
	}
	tb.db.mu.RUnlock()
	writeJSON(w, http.StatusOK, out)
}

// lookupTask finds the task of the request's :id; on failure it has answered.
func (tb *taskBoard) lookupTask(w http.ResponseWriter, r *http.Request) (*task, bool) {
	raw := r.PathValue("id")
	id, err := strconv.Atoi(raw)
	if err == nil {
		tb.db.mu.RLock()
		t := tb.taskLocked(id)
		tb.db.mu.RUnlock()
		if t != nil {
			return t, true
		}
	}
	writeError(w, http.StatusNotFound, codeTaskNotFound, "Task %s not found", raw)
	return nil, false
}

// getTask is GET /tasks/:id.
func (tb *taskBoard) getTask(w http.ResponseWriter, r *http.Request, _ string) {
	if t, ok := tb.lookupTask(w, r); ok {
		tb.db.mu.RLock()
		v := t.view()
		tb.db.mu.RUnlock()
		writeJSON(w, http.StatusOK, v)
	}
}

// getTaskOutput is GET /tasks/:id/output?type=event|result|debug (default
// debug): text/plain, 204 when there is none, Range supported.
func (tb *taskBoard) getTaskOutput(w http.ResponseWriter, r *http.Request, _ string) {
	t, ok := tb.lookupTask(w, r)
	if !ok {
		return
	}
	tb.db.mu.RLock()
	var out []byte
	switch r.URL.Query().Get("type") {
	case "event":
		out = bytes.Clone(t.events)
	case "result":
		out = bytes.Clone(t.results)
	case "debug", "":
		out = bytes.Clone(t.debug)
	}
	tb.db.mu.RUnlock()
	if len(out) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(out))
}

// deleteTask is DELETE /task/:id: 204, or 400 when the task has finished.
func (tb *taskBoard) deleteTask(w http.ResponseWriter, r *http.Request, _ string) {
	t, ok := tb.lookupTask(w, r)
	if !ok {
		return
	}
	err := tb.cancel(t.id)
	if errors.Is(err, ErrTaskFinished) {
		tb.db.mu.RLock()
		state := t.state
		tb.db.mu.RUnlock()
		writeError(w, http.StatusBadRequest, codeTaskUnexpectedState, "Cannot cancel task %d: invalid state (%s)", t.id, state)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// redirectToTask answers a task-creating request: 302 to the task, with an
// absolute Location naming the host the Director believes it has.
func (tb *taskBoard) redirectToTask(w http.ResponseWriter, id int) {
	w.Header().Set("Location", fmt.Sprintf("%s/tasks/%d", tb.external, id))
	w.WriteHeader(http.StatusFound)
}
