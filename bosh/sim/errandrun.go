package sim

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// warningLine is a warning of a task's event output (EventLog#warn).
type warningLine struct {
	Time    int64  `json:"time"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// errandCounts are a run's results as Errand::ResultSet#summary counts
// them (result_set.rb:7-9, result.rb:51-61).
type errandCounts struct{ succeeded, errored, canceled int }

func (c *errandCounts) add(exitCode int) {
	switch {
	case exitCode == 0:
		c.succeeded++
	case exitCode <= 128:
		c.errored++
	default:
		c.canceled++
	}
}

// run runs a "run errand" task as Jobs::RunErrand#perform does
// (jobs/run_errand.rb:18-35): under the deployment's lock, it finds the
// errand (Preparing deployment), skips it with when_changed when nothing
// changed since its last successful run, runs it on each of its instances
// (a result line each) and answers the summary. A non-zero exit code does
// not fail the task: the CLI reads it from the result.
func (er *errands) run(t *task) outcome {
	rn := er.runner
	if o, ok := rn.acquireLock(t); !ok {
		return o
	}
	defer rn.releaseLock(t)
	er.db.mu.Lock()
	plan, refusal, inStage := er.planLocked(t)
	er.db.mu.Unlock()
	if refusal != nil && !inStage {
		return *refusal
	}
	per := t.duration / time.Duration(1+3*len(plan.steps))
	prep := stage{stage: "Preparing deployment", task: "Preparing deployment", tags: []string{}, index: 1, total: 1}
	rn.emit(t, prep.line(evStarted, 0))
	for _, w := range plan.warnings {
		er.warn(t, w)
	}
	if refusal != nil {
		line := prep.line(evFailed, 100)
		line.Data = &lineData{Error: refusal.result}
		rn.emit(t, line)
		return *refusal
	}
	if plan.compile && !er.stage(t, stage{stage: "Preparing package compilation", task: "Finding packages to compile",
		tags: []string{}, index: 1, total: 1}, 0) {
		return rn.stopped(t)
	}
	if !rn.checkpoint(t, per) {
		return rn.stopped(t)
	}
	rn.emit(t, prep.line(evFinished, 100))
	if er.skip(t, plan) {
		return outcome{state: StateDone, result: "skipped - no changes detected"}
	}
	var counts errandCounts
	for _, s := range plan.steps {
		code, ok := er.runStep(t, s, per)
		if !ok {
			return rn.stopped(t)
		}
		counts.add(code)
	}
	if t.outcome != "" {
		return rn.injectedEnd(t, stage{})
	}
	if counts.errored+counts.canceled == 0 {
		er.db.mu.Lock()
		if dep := er.db.deployments[t.deployment]; dep != nil && dep.errandRuns != nil {
			dep.errandRuns[t.errand.name] = plan.hash
		}
		er.db.mu.Unlock()
	}
	return outcome{state: StateDone, result: fmt.Sprintf("%d succeeded, %d errored, %d canceled",
		counts.succeeded, counts.errored, counts.canceled)}
}

// skip says whether a when_changed run has nothing to do: the errand's last
// successful run had the same state (ParallelStep#has_not_changed_since_last_success?,
// parallel_step.rb:45-48). A run that is not skipped forgets it, as
// ParallelStep#run resets successful_state_hash (parallel_step.rb:23-24).
func (er *errands) skip(t *task, plan errandPlan) bool {
	er.db.mu.Lock()
	defer er.db.mu.Unlock()
	dep := er.db.deployments[t.deployment]
	if dep == nil {
		return false
	}
	last, ran := dep.errandRuns[t.errand.name]
	if t.errand.whenChanged && ran && last == plan.hash {
		return true
	}
	if dep.errandRuns == nil {
		dep.errandRuns = map[string]string{}
	}
	dep.errandRuns[t.errand.name] = ""
	return false
}

// runStep runs the errand on one instance (Errand::Runner#run,
// errand/runner.rb:19-82): an errand instance group's VM is created when
// none was kept and updated first; then its start event, "Running errand",
// the fetch of its job logs, its result line and its end event with the
// exit code. Without keep_alive the errand VM is deleted after. It returns
// the exit code; false when the task stopped.
func (er *errands) runStep(t *task, s errandStep, per time.Duration) (int, bool) {
	label := s.label()
	if s.lifecycle {
		if !s.in.expectsVM && !er.stage(t, stage{stage: "Creating missing vms", task: label, tags: []string{}, index: 1, total: 1}, per) {
			return 0, false
		}
		if !er.stage(t, stage{stage: "Updating instance", task: label + " (canary)", tags: []string{s.in.job}, index: 1, total: 1}, per) {
			return 0, false
		}
	}
	er.db.mu.Lock()
	start := er.rec.recordLocked(er.runEvent(t, label, 0, nil))
	er.db.mu.Unlock()
	if !er.stage(t, stage{stage: "Running errand", task: label, tags: []string{}, index: 1, total: 1}, per) ||
		!er.stage(t, stage{stage: fmt.Sprintf("Fetching logs for %s (%d)", s.in.name(), s.in.index),
			task: "Finding and packing log files", tags: []string{}, index: 1, total: 1}, 0) {
		return 0, false
	}
	er.db.mu.Lock()
	defer er.db.mu.Unlock()
	o := er.outcomeLocked(t.deployment, t.errand.name, s.in)
	var line errandResult
	line.Instance.Group, line.Instance.ID = s.in.job, s.in.id
	line.ErrandName, line.ExitCode, line.Stdout, line.Stderr = t.errand.name, o.ExitCode, o.Stdout, o.Stderr
	line.Logs.BlobstoreID = er.blobs.storeLogsLocked(&logsTarget{instances: []instance{s.in}, types: "job"})
	sum := sha1.Sum(er.db.resources[line.Logs.BlobstoreID])
	line.Logs.SHA1 = hex.EncodeToString(sum[:])
	t.results = append(append(t.results, simkit.JSON(line)...), '\n')
	code := o.ExitCode
	er.rec.recordLocked(er.runEvent(t, label, start, &code))
	if s.lifecycle {
		er.keepLocked(t.deployment, s.in.id, t.errand.keepAlive)
	}
	return o.ExitCode, true
}

// runEvent is the start (parent 0) or end event of an errand's run on an
// instance (errand/runner.rb:97-113): action run, object_type errand, the
// end's context the exit code.
func (er *errands) runEvent(t *task, label string, parent int64, exitCode *int) event {
	e := taskEvent(t, "run", "errand", t.errand.name)
	e.instance, e.parent = label, parent
	if exitCode != nil {
		e.context = simkit.JSON(map[string]int{"exit_code": *exitCode})
	}
	return e
}

// keepLocked keeps an errand instance's VM after its run (keep_alive), or
// deletes it (ErrandInstanceUpdater#cleanup_vms, errand_instance_updater.rb:51-58).
func (er *errands) keepLocked(deployment, id string, keep bool) {
	dep := er.db.deployments[deployment]
	if dep == nil {
		return
	}
	if dep.inst == nil {
		dep.inst = map[string]*instState{}
	}
	st := dep.inst[id]
	if st == nil {
		st = &instState{}
		dep.inst[id] = st
	}
	st.kept = keep
}

// stage shows one step of a run-errand task, taking dur; false when the
// task was cancelled or the Director closes meanwhile.
func (er *errands) stage(t *task, s stage, dur time.Duration) bool {
	er.runner.emit(t, s.line(evStarted, 0))
	if !er.runner.checkpoint(t, dur) {
		return false
	}
	er.runner.emit(t, s.line(evFinished, 100))
	return true
}

// warn appends a warning to the task's event output.
func (er *errands) warn(t *task, msg string) {
	er.db.mu.Lock()
	defer er.db.mu.Unlock()
	t.events = append(append(t.events, simkit.JSON(warningLine{Time: time.Now().Unix(), Type: "warning", Message: msg})...), '\n')
}
