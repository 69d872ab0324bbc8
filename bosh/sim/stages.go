package sim

import (
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// States of a task's event lines.
const (
	evStarted  = "started"
	evFinished = "finished"
	evFailed   = "failed"
)

// eventLine is a line of a task's event output.
type eventLine struct {
	Time     int64     `json:"time"`
	Stage    string    `json:"stage"`
	Tags     []string  `json:"tags"`
	Total    int       `json:"total"`
	Task     string    `json:"task"`
	Index    int       `json:"index"`
	State    string    `json:"state"`
	Progress int       `json:"progress"`
	Data     *lineData `json:"data,omitempty"`
}

// lineData is the data of a failed stage line: the Director writes the
// error's message alone there, its code only on the task's last line.
type lineData struct {
	Error string `json:"error"`
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
	change       *instChange // the instance it updates, if any
}

func (s stage) line(state string, progress int) eventLine {
	return eventLine{Time: time.Now().Unix(), Stage: s.stage, Tags: s.tags, Total: s.total, Task: s.task,
		Index: s.index, State: state, Progress: progress}
}

// emit appends a line to the task's event output.
func (rn *runner) emit(t *task, l eventLine) {
	rn.db.mu.Lock()
	defer rn.db.mu.Unlock()
	t.events = append(append(t.events, simkit.JSON(l)...), '\n')
}

// stagesOf lists the steps a task shows. A deploy prepares (and renders
// templates), finds packages to compile and updates each VM, the first of
// each instance group as canary; a dry run stops after preparing, as the
// Director's UpdateDeployment returns before it compiles. A change of
// instance states updates only the instances it changes. A delete deletes
// each VM.
func (rn *runner) stagesOf(t *task) []stage {
	switch t.kind {
	case kindDeploy:
		out := []stage{
			{stage: "Preparing deployment", task: "Preparing deployment", tags: []string{}, index: 1, total: 1},
			{stage: "Preparing deployment", task: "Rendering templates", tags: []string{}, index: 2, total: 1},
		}
		if t.dryRun {
			return out
		}
		out = append(out, stage{stage: "Preparing package compilation", task: "Finding packages to compile",
			tags: []string{}, index: 1, total: 1})
		if t.target != nil {
			return append(out, changeStages(t.changes)...)
		}
		return append(out, deployStages(t.changes)...)
	case kindLogs:
		return logStages(t.logs)
	case kindScanFix:
		out := changeStages(t.changes)
		for i := range out {
			in := out[i].change.in
			out[i].stage, out[i].tags, out[i].index, out[i].total = "Applying problem resolutions", []string{}, i+1, len(out)
			out[i].task = fmt.Sprintf("VM for '%s (%d)' with cloud ID '%s' is not responding.: Recreate VM and wait for processes to start", in.name(), in.index, in.cid)
		}
		return out
	case kindDelete:
		rn.db.mu.RLock()
		vms := vmInstances(rn.db.deployments[t.deployment])
		rn.db.mu.RUnlock()
		out := instanceStages("Deleting instances", vms, "")
		return append(out, stage{stage: "Removing deployment artifacts", task: "Detaching stemcells",
			tags: []string{}, index: 1, total: 1})
	}
	return nil
}

// instanceStages is a stage per VM; the first one's task gets suffix.
func instanceStages(name string, vms []instance, suffix string) []stage {
	out := make([]stage, len(vms))
	for i, in := range vms {
		out[i] = stage{stage: name, task: fmt.Sprintf("%s (%d)", in.name(), in.index),
			tags: []string{in.job}, index: i + 1, total: len(vms)}
	}
	if len(out) > 0 {
		out[0].task += suffix
	}
	return out
}
