package bosh

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/cloudfoundry-community/gogobosh"
)

// Task states, as the Director names them.
const (
	TaskQueued     = "queued"
	TaskProcessing = "processing"
	TaskCancelling = "cancelling"
	TaskCancelled  = "cancelled"
	TaskDone       = "done"
	TaskError      = "error"
	TaskTimeout    = "timeout"
)

// DefaultPoll is the interval WaitTask uses when given none.
const DefaultPoll = time.Second

// Task is a Director task (GET /tasks/:id). Null fields are zero.
type Task struct {
	// ID is the task's id.
	ID int `json:"id"`
	// State is one of the Task* states.
	State string `json:"state"`
	// Description says what the task does, e.g. "create deployment".
	Description string `json:"description"`
	// Timestamp is when the task ended (Unix seconds), 0 while it runs.
	Timestamp int64 `json:"timestamp"`
	// StartedAt is when the task started (Unix seconds), 0 while queued.
	StartedAt int64 `json:"started_at"`
	// Result is the task's result or error text.
	Result string `json:"result"`
	// User is who created the task.
	User string `json:"user"`
	// Deployment is the deployment the task works on.
	Deployment string `json:"deployment"`
	// ContextID is the X-Bosh-Context-Id the task was created with.
	ContextID string `json:"context_id"`
}

// Terminal says the task has ended: done, error, cancelled or timeout.
func (t Task) Terminal() bool {
	switch t.State {
	case TaskDone, TaskError, TaskCancelled, TaskTimeout:
		return true
	}
	return false
}

// Succeeded says the task ended done.
func (t Task) Succeeded() bool { return t.State == TaskDone }

// TaskQuery selects tasks for Tasks. Zero fields select everything.
type TaskQuery struct {
	// Deployment selects the tasks of one deployment.
	Deployment string
	// ContextID selects the tasks created with one X-Bosh-Context-Id.
	ContextID string
	// States selects tasks in these states, e.g. {"queued", "processing"}.
	States []string
	// Limit bounds the number of tasks; 0 leaves it to the Director.
	Limit int
}

// values is the query string of q.
func (q TaskQuery) values() url.Values {
	v := url.Values{}
	if q.Deployment != "" {
		v.Set("deployment", q.Deployment)
	}
	if q.ContextID != "" {
		v.Set("context_id", q.ContextID)
	}
	if len(q.States) > 0 {
		v.Set("state", strings.Join(q.States, ","))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// Task returns a task; ErrTaskNotFound when the Director does not know it.
func (c *Client) Task(ctx context.Context, id int) (Task, error) { return c.conn.task(ctx, id) }

// task is GET /tasks/:id, which a task's creation reads too.
func (c *conn) task(ctx context.Context, id int) (Task, error) {
	var t Task
	if err := c.getJSON(ctx, request{path: taskPath(id), endpoint: epTask}, &t); err != nil {
		return Task{}, fmt.Errorf("getting task %d: %w", id, err)
	}
	return t.bounded(), nil
}

// bounded is t with its texts cut (shorten): a Director's task result,
// description or user reaches logs, operations' descriptions, histories
// and webhooks, and is not trusted to be small (a result of a megabyte was
// logged whole). Its deployment and context id, which are compared, are
// kept.
func (t Task) bounded() Task {
	t.Result, t.Description, t.User = shorten(t.Result), shorten(t.Description), shorten(t.User)
	return t
}

// Tasks lists the tasks q selects, newest first.
func (c *Client) Tasks(ctx context.Context, q TaskQuery) ([]Task, error) {
	var out []Task
	if err := c.conn.getJSON(ctx, request{path: "/tasks", query: q.values(), endpoint: epTasks}, &out); err != nil {
		return nil, fmt.Errorf("listing tasks: %w", err)
	}
	for i := range out {
		out[i] = out[i].bounded()
	}
	return out, nil
}

// WaitTask polls a task every poll (DefaultPoll when 0) until it reaches any
// terminal state, and returns it; whether it succeeded is the caller's to
// check with Succeeded. It returns early, with the task as last seen, when a
// poll fails or ctx ends (the error then wraps ctx.Err()); it starts no goroutine.
func (c *Client) WaitTask(ctx context.Context, id int, poll time.Duration) (Task, error) {
	if poll <= 0 {
		poll = DefaultPoll
	}
	last := Task{ID: id}
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return last, fmt.Errorf("waiting for task %d: %w", id, ctx.Err())
		case <-timer.C:
		}
		t, err := c.Task(ctx, id)
		if err != nil {
			return last, fmt.Errorf("waiting for task %d: %w", id, err)
		}
		if t.Terminal() {
			return t, nil
		}
		last = t
		timer.Reset(poll)
	}
}

// TaskEvents returns a task's event log (its "event" output), error lines included.
func (c *Client) TaskEvents(ctx context.Context, id int) ([]gogobosh.TaskEvent, error) {
	q := url.Values{"type": {"event"}}
	res, err := c.conn.do(ctx, request{method: http.MethodGet, path: taskPath(id) + "/output", query: q, endpoint: epTaskOutput})
	if err != nil {
		return nil, fmt.Errorf("getting events of task %d: %w", id, err)
	}
	events, err := parseEvents(res.body)
	if err != nil {
		return nil, fmt.Errorf("getting events of task %d: %w", id, err)
	}
	return events, nil
}

// parseEvents reads newline-delimited JSON events; blank lines are skipped
// and an empty body has none. A line of any length is read: the body is
// already bounded (see answerLimit).
func parseEvents(body []byte) ([]gogobosh.TaskEvent, error) {
	var out []gogobosh.TaskEvent
	n := 0
	for line := range bytes.Lines(body) {
		n++
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var e gogobosh.TaskEvent
		if err := decodeJSON(line, &e); err != nil {
			return nil, fmt.Errorf("decoding event line %d: %w", n, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// createTask sends a task-creating request and returns the task its
// redirect names, read from the configured address with the same credentials.
func (c *conn) createTask(ctx context.Context, r request) (Task, error) {
	res, err := c.do(ctx, r)
	if err != nil {
		return Task{}, err
	}
	id, err := taskID(res)
	if err != nil {
		return Task{}, fmt.Errorf("bosh director %q: %s %s: %w", c.name, r.method, r.path, err)
	}
	c.metrics.taskCreated(c.name)
	c.log.Debug("bosh task created", "task", id, "method", r.method, "endpoint", r.endpoint)
	t, err := c.task(ctx, id)
	if err != nil {
		return Task{ID: id}, err
	}
	return t, nil
}

// taskPath is the path of a task.
func taskPath(id int) string { return "/tasks/" + strconv.Itoa(id) }
