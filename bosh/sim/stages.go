package sim

import (
	"fmt"
	"time"
)

// States of a task's event lines.
const (
	evStarted  = "started"
	evFinished = "finished"
	evFailed   = "failed"
)

// eventLine is a line of a task's event output.
type eventLine struct {
	Time     int64      `json:"time"`
	Stage    string     `json:"stage"`
	Tags     []string   `json:"tags"`
	Total    int        `json:"total"`
	Task     string     `json:"task"`
	Index    int        `json:"index"`
	State    string     `json:"state"`
	Progress int        `json:"progress"`
	Error    *lineError `json:"error,omitempty"`
}

type lineError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// errorLine is the last event line of a task that ended in error.
type errorLine struct {
	Time  int64     `json:"time"`
	Error lineError `json:"error"`
}

// stage is a step of a task, shown as a started and a finished (or failed)
// event line.
type stage struct {
	stage, task  string
	tags         []string
	index, total int
}

func (s stage) line(state string, progress int) eventLine {
	return eventLine{Time: time.Now().Unix(), Stage: s.stage, Tags: s.tags, Total: s.total, Task: s.task,
		Index: s.index, State: state, Progress: progress}
}

// emit appends a line to the task's event output.
func (d *Director) emit(t *task, l eventLine) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t.events = append(append(t.events, mustJSON(l)...), '\n')
}

// stagesOf lists the steps a task shows: a deploy prepares and updates
// each VM (the first as canary), a delete deletes each VM.
func (d *Director) stagesOf(t *task) []stage {
	switch t.kind {
	case kindDeploy:
		out := []stage{{stage: "Preparing deployment", task: "Preparing deployment", tags: []string{}, index: 1, total: 1}}
		return append(out, instanceStages("Updating instance", t.deployment, t.content, " (canary)")...)
	case kindDelete:
		d.mu.RLock()
		var c *content
		if dep := d.deployments[t.deployment]; dep != nil {
			c = dep.content
		}
		d.mu.RUnlock()
		out := instanceStages("Deleting instances", t.deployment, c, "")
		return append(out, stage{stage: "Removing deployment artifacts", task: "Detaching stemcells",
			tags: []string{}, index: 1, total: 1})
	}
	return nil
}

// instanceStages is a stage per VM of c; the first one's task gets suffix.
func instanceStages(name, deployment string, c *content, suffix string) []stage {
	vms := vmInstances(deployment, c, time.Time{})
	out := make([]stage, len(vms))
	for i, in := range vms {
		out[i] = stage{stage: name, task: fmt.Sprintf("%s/%s (%d)", in.job, in.id, in.index),
			tags: []string{in.job}, index: i + 1, total: len(vms)}
	}
	if len(out) > 0 {
		out[0].task += suffix
	}
	return out
}
