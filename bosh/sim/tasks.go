package sim

import (
	"errors"
	"fmt"
	"time"
)

// Task states, as the Director names them.
const (
	StateQueued     = "queued"
	StateProcessing = "processing"
	StateCancelling = "cancelling"
	StateCancelled  = "cancelled"
	StateDone       = "done"
	StateError      = "error"
	StateTimeout    = "timeout"
)

// Errors of the task knobs.
var (
	ErrTaskNotFound = errors.New("task not found")
	ErrTaskFinished = errors.New("task already finished")
	ErrBadState     = errors.New("not a state a task can be made to end in")
)

type taskKind int

const (
	kindDeploy taskKind = iota
	kindDelete
	kindVMState
	kindLogs
	kindScanFix
	kindErrand
)

// task is a Director task. Its fields are guarded by store.mu, except
// the inputs set before it starts.
type task struct {
	id                      int
	kind                    taskKind
	state, description      string
	startedAt, timestamp    int64     // unix seconds; 0 = null
	created, began, ended   time.Time // when it was created, and the same, to the nanosecond (TaskLog)
	result                  *string
	user, deployment, ctxID string
	outcome                 string        // injected terminal state; "" = as it goes
	action                  string        // of its deployment events: create, update or delete
	before                  *content      // what its deployment held when it started
	duration                time.Duration // processing time, fixed when it is created
	cancel                  chan struct{}
	admit                   chan struct{} // closed when a worker takes it (queue.go)
	statusWorker            bool          // the dedicated status worker took it (queue.go)
	done                    chan struct{} // closed once it ended, when someone waits for it
	events, results, debug  []byte

	// inputs of a deploy
	manifest string
	doc      *manifestDoc // checked against the cloud config when the task runs
	content  *content
	refusal  error // why the manifest is refused; the task ends in error
	stageErr error // why it fails in Preparing deployment (a stemcell not uploaded)

	instances bool           // a vm-state task that lists instances, not VMs
	logs      *logsTarget    // what a fetch-logs task packs
	errand    *errandRequest // what a run-errand task runs

	// inputs of a change of instance states
	target  *jobTarget
	changes []*instChange // the instances it changes, decided when it runs
	dryRun  bool
}

// taskView is a task as GET /tasks/:id shows it.
type taskView struct {
	ID          int     `json:"id"`
	State       string  `json:"state"`
	Description string  `json:"description"`
	Timestamp   *int64  `json:"timestamp"`
	StartedAt   *int64  `json:"started_at"`
	Result      *string `json:"result"`
	User        string  `json:"user"`
	Deployment  string  `json:"deployment"`
	ContextID   string  `json:"context_id"`
}

func (t *task) view() taskView {
	return taskView{ID: t.id, State: t.state, Description: t.description, Timestamp: nullable(t.timestamp),
		StartedAt: nullable(t.startedAt), Result: t.result, User: t.user, Deployment: t.deployment, ContextID: t.ctxID}
}

func nullable(v int64) *int64 {
	if v == 0 {
		return nil
	}
	return &v
}

func terminal(state string) bool {
	return state == StateDone || state == StateError || state == StateCancelled || state == StateTimeout
}

// taskBoard keeps the Director's tasks: it creates and queues them (with
// the ends EndNextTask asked for), finds, lists and cancels them, and
// answers the /tasks routes. The runner runs them.
type taskBoard struct {
	db       *store
	knobs    *Knobs // the duration of a new task
	external string // base URL the Director puts in Location headers
}

// newTaskLocked records a queued task; the caller starts it (runner.startTask)
// once db.mu is released.
func (tb *taskBoard) newTaskLocked(kind taskKind, description, deployment, user, ctxID string) *task {
	t := &task{id: len(tb.db.tasks) + 1, kind: kind, state: StateQueued, description: description,
		user: user, deployment: deployment, ctxID: ctxID, duration: tb.knobs.taskDuration(),
		cancel: make(chan struct{}), admit: make(chan struct{}), created: time.Now()}
	t.outcome = tb.takeOutcomeLocked(deployment)
	tb.db.tasks = append(tb.db.tasks, t)
	tb.db.queue.enqueueLocked(t)
	t.logf("Director task %d created: %s", t.id, description)
	return t
}

// taskLocked is task id, nil when there is none (or a cleanup removed it).
func (tb *taskBoard) taskLocked(id int) *task {
	if id < 1 || id > len(tb.db.tasks) {
		return nil
	}
	return tb.db.tasks[id-1]
}

// logf appends a line to the task's debug output.
func (t *task) logf(format string, args ...any) {
	line := fmt.Sprintf("D, [%s #1] [task:%d] DEBUG -- DirectorJobRunner: %s\n",
		time.Now().UTC().Format("2006-01-02T15:04:05.000000"), t.id, fmt.Sprintf(format, args...))
	t.debug = append(t.debug, line...)
}

// endNext makes the next task created for deployment ("" = any
// deployment) end in state: StateError, StateTimeout or StateCancelled.
func (tb *taskBoard) endNext(deployment, state string) error {
	if state != StateError && state != StateTimeout && state != StateCancelled {
		return fmt.Errorf("ending the next task of %q in %q: %w", deployment, state, ErrBadState)
	}
	tb.db.mu.Lock()
	defer tb.db.mu.Unlock()
	tb.db.outcomes[deployment] = append(tb.db.outcomes[deployment], state)
	return nil
}

// takeOutcomeLocked takes the end asked for the next task of deployment
// (or of any), "" when none was.
func (tb *taskBoard) takeOutcomeLocked(deployment string) string {
	for _, key := range []string{deployment, ""} {
		if q := tb.db.outcomes[key]; len(q) > 0 {
			tb.db.outcomes[key] = q[1:]
			return q[0]
		}
	}
	return ""
}

// cancel cancels a task as DELETE /task/:id does: a queued task is
// cancelled at once, a processing one at its next checkpoint.
func (tb *taskBoard) cancel(id int) error {
	tb.db.mu.Lock()
	defer tb.db.mu.Unlock()
	t := tb.taskLocked(id)
	switch {
	case t == nil:
		return fmt.Errorf("cancelling task %d: %w", id, ErrTaskNotFound)
	case terminal(t.state):
		return fmt.Errorf("cancelling task %d (%s): %w", id, t.state, ErrTaskFinished)
	case t.state != StateCancelling:
		t.state = StateCancelling
		close(t.cancel)
	}
	return nil
}

// DefaultMaxTasks is how many ended tasks of each type a tasks cleanup
// keeps: the Director's director.max_tasks default (cloudfoundry/bosh
// jobs/director/spec:123-125).
const DefaultMaxTasks = 2000

// cleanupTasks removes, as the Director's scheduled tasks cleanup does
// (jobs/scheduled_tasks_cleanup.rb, api/task_remover.rb:50-56: by type,
// the newest max ended tasks kept, queued and processing ones never
// removed), the ended tasks of each type beyond the newest max (a deploy's
// create and update are one type, update_deployment);
// GET /tasks no longer lists them and GET /tasks/:id answers 404. It
// returns how many it removed. The caller holds the lock.
func cleanupTasks(tasks []*task, max int) int {
	kept := map[string]int{}
	removed := 0
	for i := len(tasks) - 1; i >= 0; i-- {
		t := tasks[i]
		if t == nil || t.state == StateQueued || t.state == StateProcessing {
			continue
		}
		key := fmt.Sprint(t.kind, t.action == "delete") // the Director's types: update_deployment, delete_deployment, ...
		if kept[key] < max {
			kept[key]++
			continue
		}
		tasks[i] = nil
		removed++
	}
	return removed
}
