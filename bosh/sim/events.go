package sim

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// AdminUser is the user of the events recorded for the changes made without
// a task: PutDeployment, RemoveDeployment, SeedDeployments,
// RemoveAllDeployments and their admin API.
const AdminUser = "admin"

// emptyContext is the context of most events: the Director records {}.
var emptyContext = json.RawMessage(`{}`)

// eventView is an event as GET /events shows it: the Director leaves out
// every field that is null or empty, parent_id of a start event included.
type eventView struct {
	ID         string          `json:"id"`
	ParentID   string          `json:"parent_id,omitempty"`
	Timestamp  int64           `json:"timestamp"`
	User       string          `json:"user,omitempty"`
	Action     string          `json:"action,omitempty"`
	ObjectType string          `json:"object_type,omitempty"`
	ObjectName string          `json:"object_name,omitempty"`
	Error      string          `json:"error,omitempty"`
	Task       string          `json:"task,omitempty"`
	Deployment string          `json:"deployment,omitempty"`
	Instance   string          `json:"instance,omitempty"`
	Context    json.RawMessage `json:"context,omitempty"`
}

func (e *event) view() eventView {
	v := eventView{ID: strconv.FormatInt(e.id, 10), Timestamp: time.Unix(0, e.at).Unix(), User: e.user,
		Action: e.action, ObjectType: e.objectType, ObjectName: e.objectName, Error: e.err,
		Deployment: e.deployment, Instance: e.instance, Context: e.context}
	if e.parent != 0 {
		v.ParentID = strconv.FormatInt(e.parent, 10)
	}
	if e.task != 0 {
		v.Task = strconv.Itoa(e.task)
	}
	return v
}

// recorder records the Director's events and answers GET /events; as a
// Director with record_events off, it records nothing while
// Knobs.noEvents is set.
type recorder struct {
	db    *store
	knobs *Knobs
}

// recordLocked records e now and returns its id.
func (rec *recorder) recordLocked(e event) int64 {
	if rec.knobs.noEvents.Load() { // recorded nowhere, as the Director's unsaved Models::Event
		return 0
	}
	e.at = time.Now().UnixNano()
	if e.context == nil {
		e.context = emptyContext
	}
	return rec.db.events.add(e)
}

// taskEvent is an event of task t.
func taskEvent(t *task, action, objectType, objectName string) event {
	return event{task: t.id, user: t.user, action: action, objectType: objectType, objectName: objectName,
		deployment: t.deployment}
}

// recordTaskStart records the start of a deploy or delete task, before it
// waits for its lock as the Director does, and notes what the deployment
// held then. It returns the id the task's end event names as its parent.
func (rec *recorder) recordTaskStart(t *task) int64 {
	rec.db.mu.Lock()
	defer rec.db.mu.Unlock()
	if dep := rec.db.deployments[t.deployment]; dep != nil {
		t.before = dep.content
	}
	return rec.recordLocked(taskEvent(t, t.action, "deployment", t.deployment))
}

// recordTaskEndLocked records the end of a deploy or delete task whose
// start event is start: with the task's error unless it is done, and, for
// a deploy that was planned (it got its lock and its manifest was valid),
// the releases and stemcells before and after in its context.
func (rec *recorder) recordTaskEndLocked(t *task, start int64, o outcome, planned bool) {
	e := taskEvent(t, t.action, "deployment", t.deployment)
	e.parent = start
	if o.state != StateDone {
		e.err = o.result
	}
	if planned && t.kind == kindDeploy {
		e.context = changeContext(t.before, t.content)
	}
	rec.recordLocked(e)
}

// recordTaskEnd is recordTaskEndLocked taking db.mu.
func (rec *recorder) recordTaskEnd(t *task, start int64, o outcome, planned bool) {
	rec.db.mu.Lock()
	defer rec.db.mu.Unlock()
	rec.recordTaskEndLocked(t, start, o, planned)
}

// adminEvent is an event of a change made without a task.
func adminEvent(action, name string) event {
	return event{user: AdminUser, action: action, objectType: "deployment", objectName: name, deployment: name}
}

// recordChangeLocked records a change made without a task as a deploy or
// delete by AdminUser would be: a start event and an end event naming it,
// whose context has the releases and stemcells before and after.
func (rec *recorder) recordChangeLocked(action, name string, before, after *content) {
	end := adminEvent(action, name)
	end.parent = rec.recordLocked(adminEvent(action, name))
	if action != "delete" {
		end.context = changeContext(before, after)
	}
	rec.recordLocked(end)
}

// changeObjects are the releases and stemcells of a deployment in an
// event's context, as "name/version".
type changeObjects struct {
	Releases  []string `json:"releases,omitempty"`
	Stemcells []string `json:"stemcells,omitempty"`
}

func objectsOf(c *content) changeObjects {
	var o changeObjects
	if c == nil {
		return o
	}
	for _, r := range c.releases {
		o.Releases = append(o.Releases, r.Name+"/"+r.Version)
	}
	for _, s := range c.stemcells {
		o.Stemcells = append(o.Stemcells, s.Name+"/"+s.Version)
	}
	return o
}

// changeContext is the context of the end event of a deploy.
func changeContext(before, after *content) json.RawMessage {
	return simkit.JSON(struct {
		Before changeObjects `json:"before"`
		After  changeObjects `json:"after"`
	}{objectsOf(before), objectsOf(after)})
}
