package sim

import (
	"net/http"
	"strconv"
	"time"
)

const (
	// maxEvents is how many events the Director keeps; older ones are dropped.
	maxEvents = 10000
	// eventsPage is the most events GET /events answers.
	eventsPage = 200
)

// event is a Director event as GET /events shows it.
type event struct {
	ID         string         `json:"id"`
	Timestamp  int64          `json:"timestamp"`
	User       string         `json:"user"`
	Action     string         `json:"action"`
	ObjectType string         `json:"object_type"`
	ObjectName string         `json:"object_name"`
	Task       string         `json:"task"`
	Deployment string         `json:"deployment"`
	Instance   *string        `json:"instance"`
	Context    map[string]any `json:"context"`
	Error      *string        `json:"error"`

	id int
}

// recordLocked records an event of a task; errMsg "" = no error.
func (d *Director) recordLocked(t *task, action, objectType, objectName, errMsg string) {
	d.nextEventID++
	e := event{ID: strconv.Itoa(d.nextEventID), id: d.nextEventID, Timestamp: time.Now().Unix(), User: t.user,
		Action: action, ObjectType: objectType, ObjectName: objectName, Task: strconv.Itoa(t.id),
		Deployment: t.deployment, Context: map[string]any{}}
	if errMsg != "" {
		e.Error = &errMsg
	}
	if len(d.events) >= maxEvents {
		d.events = append(d.events[:0], d.events[maxEvents/10:]...)
	}
	d.events = append(d.events, e)
}

// recordTaskEvent records the deployment event of a deploy or delete task,
// at its start and at its end.
func (d *Director) recordTaskEvent(t *task, errMsg string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if t.action == "" {
		t.action = "delete"
		if t.kind == kindDeploy {
			t.action = "update"
			if dep := d.deployments[t.deployment]; dep == nil || dep.content == nil {
				t.action = "create"
			}
		}
	}
	d.recordLocked(t, t.action, "deployment", t.deployment, errMsg)
}

// eventFilter is the query of GET /events.
type eventFilter struct {
	beforeID, afterID                             int
	deployment, task, action, objectType, objName string
	user                                          string
}

func (f eventFilter) matches(e *event) bool {
	return (f.beforeID == 0 || e.id < f.beforeID) && e.id > f.afterID &&
		(f.deployment == "" || e.Deployment == f.deployment) && (f.task == "" || e.Task == f.task) &&
		(f.action == "" || e.Action == f.action) && (f.objectType == "" || e.ObjectType == f.objectType) &&
		(f.objName == "" || e.ObjectName == f.objName) && (f.user == "" || e.User == f.user)
}

// listEvents is GET /events: newest first, at most 200.
func (d *Director) listEvents(w http.ResponseWriter, r *http.Request, _ string) {
	q := r.URL.Query()
	f := eventFilter{deployment: q.Get("deployment"), task: q.Get("task"), action: q.Get("action"),
		objectType: q.Get("object_type"), objName: q.Get("object_name"), user: q.Get("user")}
	f.beforeID, _ = strconv.Atoi(q.Get("before_id"))
	f.afterID, _ = strconv.Atoi(q.Get("after_id"))
	out := []event{}
	d.mu.RLock()
	for i := len(d.events) - 1; i >= 0 && len(out) < eventsPage; i-- {
		if f.matches(&d.events[i]) {
			out = append(out, d.events[i])
		}
	}
	d.mu.RUnlock()
	writeJSON(w, http.StatusOK, out)
}
