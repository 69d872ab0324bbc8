package operation

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// findTimeout bounds the look for a task whose answer was lost.
const findTimeout = 30 * time.Second

// TaskFinder finds a Director's tasks by context id; *bosh.Client has it.
type TaskFinder interface {
	Tasks(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error)
}

// Attempts runs try, again after the faults its caller retries (the
// broker's: transient ones, with backoff, within a budget); nil: once.
type Attempts func(ctx context.Context, try func(context.Context) error) error

// Start creates a Director task with call under contextID (sent as
// X-Bosh-Context-Id). A request the Director took but whose answer was
// lost must not make a second task: before every attempt after the first,
// and after a last attempt that got no answer, find (when set) is asked
// for a task of contextID, which is then the operation's. An answer about
// the request (a 4xx: refused) is final and no task is looked for. A task
// created but not read back comes with its id and the error.
func Start(ctx context.Context, contextID string, find TaskFinder, attempts Attempts, call func(context.Context) (bosh.Task, error)) (bosh.Task, error) {
	var task bosh.Task
	tried := false
	try := func(ctx context.Context) error {
		if tried && find != nil {
			found, err := Find(ctx, find, contextID)
			if err != nil || found.ID != 0 {
				task = found
				return err
			}
		}
		tried = true
		var err error
		task, err = call(bosh.WithContextID(ctx, contextID))
		if err != nil && task.ID != 0 { // created, not read back: not created again
			return retry.Terminal(err)
		}
		return err
	}
	var err error
	if attempts == nil {
		err = try(ctx)
	} else {
		err = attempts(ctx, try)
	}
	if err == nil || task.ID != 0 || find == nil || refused(err) {
		return task, err
	}
	// The last attempt's answer was lost: the Director may have made it.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), findTimeout)
	defer cancel()
	if found, ferr := Find(fctx, find, contextID); ferr == nil && found.ID != 0 {
		return found, nil
	}
	return task, err
}

// refused says whether err is the Director's answer about the request.
func refused(err error) bool {
	var api *bosh.APIError
	return errors.As(err, &api) && api.StatusCode >= 400 && api.StatusCode < 500 && api.StatusCode != 429
}

// OfDeployment is find, asked only for the tasks of deployment: a task of
// another deployment that carries an operation's context id (a shared
// Director's user can read the ids in GET /tasks and send one) is never
// taken for the operation's.
func OfDeployment(find TaskFinder, deployment string) TaskFinder {
	return deploymentTasks{find: find, name: deployment}
}

type deploymentTasks struct {
	find TaskFinder
	name string
}

func (d deploymentTasks) Tasks(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error) {
	q.Deployment = d.name
	tasks, err := d.find.Tasks(ctx, q)
	return slices.DeleteFunc(tasks, func(t bosh.Task) bool { return t.Deployment != d.name }), err
}

// Find is the task of contextID on the Director; a zero task when there is none.
func Find(ctx context.Context, find TaskFinder, contextID string) (bosh.Task, error) {
	tasks, err := find.Tasks(ctx, bosh.TaskQuery{ContextID: contextID})
	if err != nil {
		return bosh.Task{}, err
	}
	for _, t := range tasks {
		if t.ContextID == contextID {
			return t, nil
		}
	}
	return bosh.Task{}, nil
}
