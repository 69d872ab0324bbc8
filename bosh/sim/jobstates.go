package sim

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// Director error codes of instance state changes (errors.rb of
// cloudfoundry/bosh).
const (
	codeInstanceNotFound     = 70001
	codeInstanceInvalidIndex = 70002
	codeInvalidValue         = 40005
	codeInvalidGroupState    = 140008
	codeInvalidInstanceState = 140007
)

// jobTarget is what a PUT /deployments/:name/jobs/... asks: the instances
// of a group ("*" = every group), or one instance by index or uuid, to be
// brought to a state.
type jobTarget struct {
	group, instance, state string
	ids                    map[string]bool // only these instances (scan and fix); nil = no such limit
}

// instChange is an instance a state change updates.
type instChange struct {
	in     instance
	target string // started, stopped, detached, restart or recreate
	parent int64  // the id of its instance event's start
}

// action is the action of the instance's events: the Director names a
// change of state by the state it reaches.
func (c *instChange) action() string {
	switch c.target {
	case instStarted:
		return "start"
	case instStopped, instDetached:
		return "stop"
	}
	return c.target // restart, recreate, and a deploy's create, update, delete
}

// findInstance finds a deployment's instance of group by index or uuid.
func findInstance(dep *deployment, group, which string) *instance {
	for _, in := range instancesOf(dep) {
		if in.job == group && (in.id == which || strconv.Itoa(in.index) == which) {
			return &in
		}
	}
	return nil
}

// validStates are the states an instance can be asked to reach.
var validStates = map[string]bool{instStarted: true, instStopped: true, instDetached: true, "recreate": true, "restart": true}

// changer plans and applies what a task changes in its deployment's
// instances (a deploy, a change of instance states, a scan and fix), and
// records their instance and VM events.
type changer struct {
	db      *store
	rec     *recorder
	configs *configBook // the current cloud config, whose change updates every VM
}

// changesLocked lists the instances a state change updates, in the order
// of the manifest; an error refuses the change as the Director's planner
// does.
func (ch *changer) changesLocked(t *task) ([]*instChange, error) {
	tg := t.target
	dep := ch.db.deployments[t.deployment]
	if dep == nil {
		return nil, nil
	}
	if !validStates[tg.state] && (tg.group == "*" || slices.ContainsFunc(instancesOf(dep), func(in instance) bool { return in.job == tg.group })) {
		if tg.instance != "" {
			return nil, &manifestError{code: codeInvalidInstanceState, msg: fmt.Sprintf(
				"Invalid state '%s' for '%s/%s', valid states are: started, stopped, detached, recreate, restart", tg.state, tg.group, tg.instance)}
		}
		return nil, &manifestError{code: codeInvalidGroupState, msg: fmt.Sprintf(
			"Invalid state '%s' for '%s', valid states are: started, stopped, detached, recreate, restart", tg.state, tg.group)}
	}
	out := []*instChange{}
	for _, in := range instancesOf(dep) {
		switch {
		case in.group.errand, tg.group != "*" && tg.group != in.job, tg.ids != nil && !tg.ids[in.id], !in.expectsVM && tg.ids != nil,
			tg.instance != "" && tg.instance != in.id && tg.instance != strconv.Itoa(in.index):
			continue
		case (tg.state == instStarted || tg.state == instStopped || tg.state == instDetached) && in.state == tg.state:
			continue // already there
		case t.kind == kindScanFix && in.agent != AgentUnresponsive:
			continue // scan and fix resolves unresponsive agents only
		}
		out = append(out, &instChange{in: in, target: tg.state})
	}
	return out, nil
}

// changeStages is an "Updating instance" stage per changed instance, tagged
// with its group, counted within its group, the first of each as canary.
func changeStages(changes []*instChange) []stage {
	total := map[string]int{}
	for _, c := range changes {
		total[c.in.job]++
	}
	seen := map[string]int{}
	out := make([]stage, len(changes))
	for i, c := range changes {
		seen[c.in.job]++
		task := fmt.Sprintf("%s (%d)", c.in.name(), c.in.index)
		if seen[c.in.job] == 1 {
			task += " (canary)"
		}
		out[i] = stage{stage: "Updating instance", task: task, tags: []string{c.in.job},
			index: seen[c.in.job], total: total[c.in.job], change: c}
	}
	return out
}

// instanceEvent is an event of an instance a task changes.
func instanceEvent(t *task, action string, in instance) event {
	e := taskEvent(t, action, "instance", in.name())
	e.instance = in.name()
	return e
}

// vmEvent is an event of an instance's VM.
func vmEvent(user string, task int, deployment, action, cid string, in instance) event {
	return event{task: task, user: user, action: action, objectType: "vm", objectName: cid,
		deployment: deployment, instance: in.name()}
}

// beginChange records the start of an instance's update, as the Director's
// InstanceUpdater does before it stops, recreates or starts it.
func (ch *changer) beginChange(t *task, c *instChange) {
	if t.kind == kindScanFix {
		return // a resurrection records VM events only
	}
	ch.db.mu.Lock()
	defer ch.db.mu.Unlock()
	e := instanceEvent(t, c.action(), c.in)
	switch c.target {
	case "recreate", changeCreate:
		e.context = simkit.JSON(map[string]string{"az": c.in.az})
	case changeUpdate:
		e.context = simkit.JSON(map[string]any{"az": c.in.az, "changes": []string{"configuration"}})
	}
	c.parent = ch.rec.recordLocked(e)
}

// endChange applies an instance's update and records its VM's events and
// the end of its instance event (with errText when it failed).
func (ch *changer) endChange(t *task, c *instChange, errText string) {
	ch.db.mu.Lock()
	defer ch.db.mu.Unlock()
	if errText == "" {
		ch.applyChangeLocked(t, c)
	}
	if t.kind == kindScanFix {
		return
	}
	e := instanceEvent(t, c.action(), c.in)
	e.parent, e.err = c.parent, errText
	ch.rec.recordLocked(e)
}

// applyChangeLocked brings an instance to its new state: a recreate gives
// it a new VM (and its agent answers again), a hard stop deletes its VM, a
// start of a detached instance creates one.
func (ch *changer) applyChangeLocked(t *task, c *instChange) {
	dep := ch.db.deployments[t.deployment]
	switch c.target { // a deploy's: its content is applied when it completes
	case changeCreate: // the start names no VM yet, the end names it
		end := vmEvent(t.user, t.id, t.deployment, "create", c.in.cid, c.in)
		end.parent = ch.rec.recordLocked(vmEvent(t.user, t.id, t.deployment, "create", "", c.in))
		ch.rec.recordLocked(end)
		return
	case changeUpdate:
		return
	case changeDelete:
		if c.in.expectsVM {
			ch.vmPairLocked(t.user, t.id, t.deployment, "delete", c.in.cid, c.in)
		}
		if dep != nil {
			delete(dep.inst, c.in.id)
		}
		return
	}
	if dep == nil || findInstance(dep, c.in.job, c.in.id) == nil { // changed out of band meanwhile
		return
	}
	if dep.inst == nil {
		dep.inst = map[string]*instState{}
	}
	st := dep.inst[c.in.id]
	if st == nil {
		st = &instState{}
		dep.inst[c.in.id] = st
	}
	hadVM := c.in.expectsVM
	switch c.target {
	case "recreate":
		ch.vmPairLocked(t.user, t.id, dep.name, "delete", c.in.cid, c.in)
		st.gen, st.vmAt, st.agent = st.gen+1, time.Now().UTC().Truncate(time.Second), ""
		if t.kind != kindScanFix { // a resurrection keeps the instance's state
			st.state = instStarted
		}
		ch.vmCreatedLocked(t.user, t.id, dep, c.in)
	case "restart":
		st.agent, st.state = "", instStarted
	case instDetached:
		if hadVM {
			ch.vmPairLocked(t.user, t.id, dep.name, "delete", c.in.cid, c.in)
			st.gen++
		}
		st.state, st.agent = instDetached, ""
	default: // started, stopped
		st.state = c.target
		if !hadVM {
			st.vmAt, st.agent = time.Now().UTC().Truncate(time.Second), ""
			st.state = c.target
			ch.vmCreatedLocked(t.user, t.id, dep, c.in)
		}
	}
	ch.db.invalidateLocked()
}

// vmPairLocked records a VM event's start and end, both naming cid.
func (ch *changer) vmPairLocked(user string, task int, deployment, action, cid string, in instance) {
	end := vmEvent(user, task, deployment, action, cid, in)
	end.parent = ch.rec.recordLocked(vmEvent(user, task, deployment, action, cid, in))
	ch.rec.recordLocked(end)
}

// vmCreatedLocked records the creation of an instance's new VM: the start
// names no VM (its cid is not known yet), the end names it.
func (ch *changer) vmCreatedLocked(user string, task int, dep *deployment, was instance) {
	start := ch.rec.recordLocked(vmEvent(user, task, dep.name, "create", "", was))
	cid := "" // the instance went with a manifest changed meanwhile: no VM to name
	if now := findInstance(dep, was.job, was.id); now != nil {
		cid = now.cid
	}
	end := vmEvent(user, task, dep.name, "create", cid, was)
	end.parent = start
	ch.rec.recordLocked(end)
}
