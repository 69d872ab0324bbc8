package sim

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
)

// outcome is how a task ends; code is the error code of an error.
type outcome struct {
	state, result string
	code          int
}

// shutdown is the outcome of a task whose Director closes: none is recorded.
var shutdown = outcome{}

// startTask runs a task in a goroutine the Director waits for on Close.
func (d *Director) startTask(t *task) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.run(t)
	}()
}

// run takes a task through queued -> processing -> its end, once a worker
// takes it (in the order the tasks were created). A task whose Director
// closes stays where it was.
func (d *Director) run(t *task) {
	select {
	case <-t.admit:
	case <-t.cancel:
		if d.withdraw(t) {
			d.finish(t, d.cancelled(t))
			return
		}
		// a worker took it meanwhile: it is cancelled at its first checkpoint
	case <-d.ctx.Done():
		if !d.withdraw(t) {
			d.release(t)
		}
		return
	}
	defer d.release(t)
	d.mu.Lock()
	if t.state == StateQueued {
		t.began = time.Now()
		t.state, t.startedAt = StateProcessing, t.began.Unix()
	}
	d.mu.Unlock()
	if o := d.execute(t); o != shutdown {
		d.finish(t, o)
	}
}

// execute runs a task and records its events as the Director does: a
// deploy or delete records its start, then waits for its lock (acquire),
// plans and runs; on success it records its end inside the lock, then
// releases it; on failure it releases the lock, then records its end with
// the error. A dry run records no end when it succeeds.
func (d *Director) execute(t *task) outcome {
	if t.kind == kindVMState || t.kind == kindLogs {
		if o, ok := d.runStages(t); !ok {
			return o
		}
		return d.complete(t, 0)
	}
	if t.kind == kindScanFix {
		return d.scanAndFix(t)
	}
	if t.deployment == "" { // a manifest so broken it names no deployment
		return refused(t)
	}
	start := d.recordTaskStart(t)
	o, ok := d.acquireLock(t)
	if !ok {
		if o != shutdown {
			d.recordTaskEnd(t, start, o, false)
		}
		return o
	}
	if t.refusal == nil && t.doc != nil { // as the Director plans the deploy, inside the lock
		d.mu.RLock()
		t.refusal, t.stageErr = d.uploads.resolve(t.doc, t.content)
		d.mu.RUnlock()
		if t.refusal == nil {
			t.refusal = d.checkCloud(t.doc)
		}
	}
	if t.refusal == nil && t.target != nil {
		d.mu.Lock()
		t.changes, t.refusal = d.changesLocked(t)
		d.mu.Unlock()
	} else if t.refusal == nil && t.kind == kindDeploy && !t.dryRun {
		d.mu.Lock()
		t.changes = d.deployChangesLocked(t)
		d.mu.Unlock()
	}
	if t.refusal != nil {
		o, ok = refused(t), false
	} else if o, ok = d.runStages(t); ok {
		o = d.complete(t, start)
	}
	d.releaseLock(t)
	if !ok && o != shutdown {
		d.recordTaskEnd(t, start, o, t.refusal == nil && t.stageErr == nil)
	}
	return o
}

// refused is the outcome of a task whose manifest is refused.
func refused(t *task) outcome {
	return outcome{StateError, t.refusal.Error(), errorCode(t.refusal)}
}

// runStages writes the task's event output while it processes, spending
// the task duration over its stages; it stops early at a cancellation or
// an injected end.
func (d *Director) runStages(t *task) (outcome, bool) {
	stages := d.stagesOf(t)
	if len(stages) == 0 { // a vm-state task shows no stage
		wait := t.duration
		if t.kind == kindVMState {
			d.mu.RLock()
			wait += agentWait(d.deployments[t.deployment], d.opts.AgentTimeout)
			d.mu.RUnlock()
		}
		if !d.checkpoint(t, wait) {
			return d.stopped(t), false
		}
		if t.outcome != "" {
			return d.injectedEnd(t, stage{}), false
		}
		return outcome{}, true
	}
	per := t.duration / time.Duration(len(stages))
	for i, s := range stages {
		d.emit(t, s.line(evStarted, 0))
		if i == 0 && t.stageErr != nil { // binding the stemcells, in Preparing deployment
			line := s.line(evFailed, 100)
			line.Data = &lineData{Error: t.stageErr.Error()}
			d.emit(t, line)
			return outcome{StateError, t.stageErr.Error(), errorCode(t.stageErr)}, false
		}
		if s.change != nil {
			d.beginChange(t, s.change)
		}
		if !d.checkpoint(t, per) {
			if s.change != nil && d.ctx.Err() == nil {
				d.endChange(t, s.change, fmt.Sprintf("Task %d cancelled", t.id))
			}
			return d.stopped(t), false
		}
		if i == len(stages)-1 && t.outcome != "" {
			o := d.injectedEnd(t, s)
			if s.change != nil {
				d.endChange(t, s.change, o.result)
			}
			return o, false
		}
		if s.change != nil {
			d.endChange(t, s.change, "")
		}
		d.emit(t, s.line(evFinished, 100))
	}
	return outcome{}, true
}

// agentGetStateTries is how often a vm-state task asks an agent for its
// state: once and GET_STATE_MAX_RETRIES (2) more times
// (src/bosh-director/lib/bosh/director/agent_client.rb:15, 31 and 363-370).
const agentGetStateTries = 3

// agentWait is how much longer a vm-state task of dep takes for its
// unresponsive agents: each try of each waits the timeout, the VMs at once
// (vm_state.rb's ThreadPool), so one unresponsive agent costs as much as
// several.
func agentWait(dep *deployment, timeout time.Duration) time.Duration {
	if dep == nil {
		return 0
	}
	for _, in := range vmInstances(dep) {
		if in.agent == AgentUnresponsive {
			return agentGetStateTries * timeout
		}
	}
	return 0
}

// checkpoint waits dur; false when the task was cancelled or the Director
// closes meanwhile.
func (d *Director) checkpoint(t *task, dur time.Duration) bool {
	timer := time.NewTimer(dur)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-t.cancel:
	case <-d.ctx.Done():
	}
	return false
}

// stopped is the outcome of a task stopped at a checkpoint.
func (d *Director) stopped(t *task) outcome {
	if d.ctx.Err() != nil {
		return shutdown
	}
	return d.cancelled(t)
}

func (d *Director) cancelled(t *task) outcome {
	return outcome{state: StateCancelled, result: fmt.Sprintf("Task %d cancelled", t.id)}
}

// injectedEnd ends a task as EndNextTask asked.
func (d *Director) injectedEnd(t *task, s stage) outcome {
	switch t.outcome {
	case StateCancelled:
		return d.cancelled(t)
	case StateTimeout:
		return outcome{state: StateTimeout, result: fmt.Sprintf("Task %d timed out", t.id)}
	}
	msg, code := "Simulated failure injected by the Director simulator", codeDirector
	if t.kind == kindDeploy && len(s.tags) > 0 {
		msg = fmt.Sprintf("'%s' is not running after update. Review logs for failed jobs: %s",
			strings.TrimSuffix(s.task, " (canary)"), s.tags[0])
		code = codeNotRunning
	}
	if s.stage != "" {
		line := s.line(evFailed, 100)
		line.Data = &lineData{Error: msg}
		d.emit(t, line)
	}
	return outcome{StateError, msg, code}
}

// finish records a task's end.
func (d *Director) finish(t *task, o outcome) {
	now := time.Now()
	d.mu.Lock()
	result := truncateResult(o.result)
	t.state, t.timestamp, t.result, t.ended = o.state, now.Unix(), &result, now
	if o.state == StateError {
		t.events = append(t.events, mustJSON(errorLine{Time: now.Unix(), Error: lineError{o.code, o.result}})...)
		t.events = append(t.events, '\n')
	}
	t.logf("Task %d %s: %s", t.id, o.state, o.result)
	if t.done != nil {
		close(t.done)
	}
	d.mu.Unlock()
	d.log.Debug("bosh director simulator task finished", "task", t.id, "state", o.state, "deployment", t.deployment)
}

// complete applies a task that ran to its end and records the end event of
// a deploy or delete, whose start event is start.
func (d *Director) complete(t *task, start int64) outcome {
	d.mu.Lock()
	defer d.mu.Unlock()
	done := outcome{state: StateDone, result: "/deployments/" + t.deployment}
	switch t.kind {
	case kindDeploy:
		if t.dryRun {
			return done // the Director returns before it records the end
		}
		if t.target == nil { // a change of instance states redeploys the manifest as it is
			d.applyLocked(t.deployment, t.manifest, nil, t.content)
		}
	case kindDelete:
		if _, ok := d.deployments[t.deployment]; ok {
			delete(d.deployments, t.deployment)
			d.invalidateLocked()
		}
	case kindLogs:
		return outcome{state: StateDone, result: d.storeLogsLocked(t.logs)} // FetchLogs#perform returns the blob's id
	case kindVMState:
		t.results = d.vmStateLinesLocked(t.deployment, t.instances)
		return outcome{state: StateDone, result: ""} // VmState#perform returns nil
	}
	d.recordTaskEndLocked(t, start, done, true)
	return done
}

// errorCode is the Director error code of a refused manifest.
func errorCode(err error) int {
	var me *manifestError
	if errors.As(err, &me) {
		return me.code
	}
	return codeDirector
}

// maxResult is the longest task result the Director keeps, in characters.
const maxResult = 128

// truncateResult cuts a task's result as the Director's job runner does
// (JobRunner#truncate): its first 129 characters, when there are more than
// 128, lose their last partial word and the blanks before it, and end in
// "...".
func truncateResult(s string) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= maxResult {
		return string(r)
	}
	r = r[:maxResult+1]
	j := len(r)
	for j > 0 && !unicode.IsSpace(r[j-1]) {
		j--
	}
	if j > 0 {
		for j > 0 && unicode.IsSpace(r[j-1]) {
			j--
		}
		r = r[:j]
	}
	return string(r) + "..."
}

// scanAndFix runs a "scan and fix" task: under the deployment's lock, it
// recreates the VMs it names; it records no deployment event.
func (d *Director) scanAndFix(t *task) outcome {
	o, ok := d.acquireLock(t)
	if !ok {
		return o
	}
	defer d.releaseLock(t)
	d.mu.Lock()
	t.changes, _ = d.changesLocked(t)
	d.mu.Unlock()
	if o, ok := d.runStages(t); !ok {
		return o
	}
	return outcome{state: StateDone, result: "scan and fix complete"}
}
