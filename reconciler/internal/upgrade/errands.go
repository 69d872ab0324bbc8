package upgrade

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
)

// Errands runs a deployment's errands; *bosh.Client has it.
type Errands interface {
	RunErrand(ctx context.Context, deployment, errand string, run bosh.ErrandRun) (bosh.Task, error)
	ErrandResults(ctx context.Context, taskID int) ([]bosh.ErrandResult, error)
}

// maxStderrTail bounds what of a failed errand's standard error an
// upgrade's reason quotes (its end).
const maxStderrTail = 512

// postDeploy runs a plan's post-deploy errands (plan.yml's
// lifecycle_errands) after an upgrade's deploy succeeded, one task after
// the other, as the broker does after a provision or an update: the
// upgrade stays marked (the broker refuses the instance's operations)
// until the last one ends.
type postDeploy struct {
	run     Errands // nil: the target's client cannot run errands
	waiter  ports.Deployer
	poll    time.Duration
	timeout time.Duration
}

// errRunner is the reason of an upgrade whose plan names errands its
// Director's client cannot run.
var errRunner = errors.New("the BOSH Director client cannot run errands")

// after runs names against deployment, the context id marking each task;
// "" when each exited 0 on every instance it ran on (or names is empty),
// else why not: the errand, its task, the instance and the tail of its
// standard error. What the deploy changed stays: nothing is rolled back.
func (p postDeploy) after(ctx context.Context, deployment, contextID string, names []string) string {
	for _, name := range names {
		if p.run == nil {
			return fmt.Sprintf("post-deploy errand %s: %v", name, errRunner)
		}
		t, err := p.run.RunErrand(bosh.WithContextID(ctx, contextID), deployment, name, bosh.ErrandRun{})
		if err != nil {
			return fmt.Sprintf("post-deploy errand %s could not start: %v", name, err)
		}
		wctx, cancel := context.WithTimeout(ctx, p.timeout)
		task, err := p.waiter.WaitTask(wctx, t.ID, p.poll)
		cancel()
		switch {
		case err != nil:
			return fmt.Sprintf("post-deploy errand %s: the wait for BOSH task %d was cut: %v", name, t.ID, err)
		case !task.Succeeded():
			return fmt.Sprintf("post-deploy errand %s: BOSH task %d ended %s: %s", name, t.ID, task.State, cut(task.Result))
		}
		results, err := p.run.ErrandResults(ctx, t.ID)
		if err != nil {
			return fmt.Sprintf("post-deploy errand %s: reading the results of BOSH task %d: %v", name, t.ID, err)
		}
		for _, r := range results {
			if !r.Succeeded() {
				return fmt.Sprintf("post-deploy errand %s exited %d on %s/%s (BOSH task %d): %s", name, r.ExitCode,
					r.Instance.Group, r.Instance.ID, t.ID, r.StderrTail(maxStderrTail))
			}
		}
	}
	return ""
}
