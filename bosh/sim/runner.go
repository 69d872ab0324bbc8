package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// outcome is how a task ends; code is the error code of an error.
type outcome struct {
	state, result string
	code          int
}

// shutdown is the outcome of a task whose Director closes: none is recorded.
var shutdown = outcome{}

// runner runs the Director's tasks: it gives them workers in turn (the
// queue), takes their deployments' locks, plans and applies what they
// change, writes their output and records their ends. Tasks stop where
// they stand when ctx ends.
type runner struct {
	db           *store
	ctx          context.Context // ends when the Director closes
	wg           *sync.WaitGroup // the Director's: Close waits for every task
	log          *slog.Logger
	agentTimeout time.Duration // Options.AgentTimeout
	lockTimeout  time.Duration // Options.LockTimeout
	rec          *recorder
	configs      *configBook
	changes      *changer
	deploys      *deploys
	blobs        *blobs
	errands      *errands
}

// startTask runs a task in a goroutine the Director waits for on Close.
func (rn *runner) startTask(t *task) {
	rn.wg.Add(1)
	go func() {
		defer rn.wg.Done()
		rn.run(t)
	}()
}

// run takes a task through queued -> processing -> its end, once a worker
// takes it (in the order the tasks were created). A task whose Director
// closes stays where it was.
func (rn *runner) run(t *task) {
	select {
	case <-t.admit:
	case <-t.cancel:
		if rn.withdraw(t) {
			rn.finish(t, rn.cancelled(t))
			return
		}
		// a worker took it meanwhile: it is cancelled at its first checkpoint
	case <-rn.ctx.Done():
		if !rn.withdraw(t) {
			rn.release(t)
		}
		return
	}
	defer rn.release(t)
	rn.db.mu.Lock()
	if t.state == StateQueued {
		t.began = time.Now()
		t.state, t.startedAt = StateProcessing, t.began.Unix()
	}
	rn.db.mu.Unlock()
	if o := rn.execute(t); o != shutdown {
		rn.finish(t, o)
	}
}

// execute runs a task and records its events as the Director does: a
// deploy or delete records its start, then waits for its lock (acquire),
// plans and runs; on success it records its end inside the lock, then
// releases it; on failure it releases the lock, then records its end with
// the error. A dry run records no end when it succeeds.
func (rn *runner) execute(t *task) outcome {
	if t.kind == kindVMState || t.kind == kindLogs {
		if o, ok := rn.runStages(t); !ok {
			return o
		}
		return rn.complete(t, 0)
	}
	if t.kind == kindScanFix {
		return rn.scanAndFix(t)
	}
	if t.kind == kindErrand {
		return rn.errands.run(t)
	}
	if t.deployment == "" { // a manifest so broken it names no deployment
		return refused(t)
	}
	start := rn.rec.recordTaskStart(t)
	o, ok := rn.acquireLock(t)
	if !ok {
		if o != shutdown {
			rn.rec.recordTaskEnd(t, start, o, false)
		}
		return o
	}
	if t.refusal == nil && t.doc != nil { // as the Director plans the deploy, inside the lock
		rn.db.mu.RLock()
		t.refusal, t.stageErr = rn.db.uploads.resolve(t.doc, t.content)
		rn.db.mu.RUnlock()
		if t.refusal == nil {
			t.refusal = rn.configs.checkCloud(t.doc)
		}
	}
	if t.refusal == nil && t.target != nil {
		rn.db.mu.Lock()
		t.changes, t.refusal = rn.changes.changesLocked(t)
		rn.db.mu.Unlock()
	} else if t.refusal == nil && t.kind == kindDeploy && !t.dryRun {
		rn.db.mu.Lock()
		t.changes = rn.changes.deployChangesLocked(t)
		rn.db.mu.Unlock()
	}
	if t.refusal != nil {
		o, ok = refused(t), false
	} else if o, ok = rn.runStages(t); ok {
		o = rn.complete(t, start)
	}
	rn.releaseLock(t)
	if !ok && o != shutdown {
		rn.rec.recordTaskEnd(t, start, o, t.refusal == nil && t.stageErr == nil)
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
func (rn *runner) runStages(t *task) (outcome, bool) {
	stages := rn.stagesOf(t)
	if len(stages) == 0 { // a vm-state task shows no stage
		wait := t.duration
		if t.kind == kindVMState {
			rn.db.mu.RLock()
			wait += agentWait(rn.db.deployments[t.deployment], rn.agentTimeout)
			rn.db.mu.RUnlock()
		}
		if !rn.checkpoint(t, wait) {
			return rn.stopped(t), false
		}
		if t.outcome != "" {
			return rn.injectedEnd(t, stage{}), false
		}
		return outcome{}, true
	}
	per := t.duration / time.Duration(len(stages))
	for i, s := range stages {
		rn.emit(t, s.line(evStarted, 0))
		if i == 0 && t.stageErr != nil { // binding the stemcells, in Preparing deployment
			line := s.line(evFailed, 100)
			line.Data = &lineData{Error: t.stageErr.Error()}
			rn.emit(t, line)
			return outcome{StateError, t.stageErr.Error(), errorCode(t.stageErr)}, false
		}
		if s.change != nil {
			rn.changes.beginChange(t, s.change)
		}
		if !rn.checkpoint(t, per) {
			if s.change != nil && rn.ctx.Err() == nil {
				rn.changes.endChange(t, s.change, fmt.Sprintf("Task %d cancelled", t.id))
			}
			return rn.stopped(t), false
		}
		if i == len(stages)-1 && t.outcome != "" {
			o := rn.injectedEnd(t, s)
			if s.change != nil {
				rn.changes.endChange(t, s.change, o.result)
			}
			return o, false
		}
		if s.change != nil {
			rn.changes.endChange(t, s.change, "")
		}
		rn.emit(t, s.line(evFinished, 100))
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
func (rn *runner) checkpoint(t *task, dur time.Duration) bool {
	timer := time.NewTimer(dur)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-t.cancel:
	case <-rn.ctx.Done():
	}
	return false
}

// stopped is the outcome of a task stopped at a checkpoint.
func (rn *runner) stopped(t *task) outcome {
	if rn.ctx.Err() != nil {
		return shutdown
	}
	return rn.cancelled(t)
}

func (rn *runner) cancelled(t *task) outcome {
	return outcome{state: StateCancelled, result: fmt.Sprintf("Task %d cancelled", t.id)}
}

// injectedEnd ends a task as EndNextTask asked.
func (rn *runner) injectedEnd(t *task, s stage) outcome {
	switch t.outcome {
	case StateCancelled:
		return rn.cancelled(t)
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
		rn.emit(t, line)
	}
	return outcome{StateError, msg, code}
}

// finish records a task's end.
func (rn *runner) finish(t *task, o outcome) {
	now := time.Now()
	rn.db.mu.Lock()
	result := truncateResult(o.result)
	t.state, t.timestamp, t.result, t.ended = o.state, now.Unix(), &result, now
	if o.state == StateError {
		t.events = append(t.events, simkit.JSON(errorLine{Time: now.Unix(), Error: lineError{o.code, o.result}})...)
		t.events = append(t.events, '\n')
	}
	t.logf("Task %d %s: %s", t.id, o.state, o.result)
	if t.done != nil {
		close(t.done)
	}
	rn.db.mu.Unlock()
	rn.log.Debug("bosh director simulator task finished", "task", t.id, "state", o.state, "deployment", t.deployment)
}

// complete applies a task that ran to its end and records the end event of
// a deploy or delete, whose start event is start.
func (rn *runner) complete(t *task, start int64) outcome {
	rn.db.mu.Lock()
	defer rn.db.mu.Unlock()
	done := outcome{state: StateDone, result: "/deployments/" + t.deployment}
	switch t.kind {
	case kindDeploy:
		if t.dryRun {
			return done // the Director returns before it records the end
		}
		if t.target == nil { // a change of instance states redeploys the manifest as it is
			rn.deploys.applyLocked(t.deployment, t.manifest, nil, t.content)
		}
	case kindDelete:
		if _, ok := rn.db.deployments[t.deployment]; ok {
			delete(rn.db.deployments, t.deployment)
			rn.db.invalidateLocked()
		}
	case kindLogs:
		return outcome{state: StateDone, result: rn.blobs.storeLogsLocked(t.logs)} // FetchLogs#perform returns the blob's id
	case kindVMState:
		t.results = vmStateLines(rn.db.deployments[t.deployment], t.instances)
		return outcome{state: StateDone, result: ""} // VmState#perform returns nil
	}
	rn.rec.recordTaskEndLocked(t, start, done, true)
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
func (rn *runner) scanAndFix(t *task) outcome {
	o, ok := rn.acquireLock(t)
	if !ok {
		return o
	}
	defer rn.releaseLock(t)
	rn.db.mu.Lock()
	t.changes, _ = rn.changes.changesLocked(t)
	rn.db.mu.Unlock()
	if o, ok := rn.runStages(t); !ok {
		return o
	}
	return outcome{state: StateDone, result: "scan and fix complete"}
}
