package redeploy

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
)

// ErrNoDeployer is the error of a redeploy of an instance whose Director
// has no Deployer (or is not configured).
var ErrNoDeployer = errors.New("no director to deploy with")

// ErrRefused wraps what makes a manifest unfit to deploy (none, one for
// another deployment, not YAML) and a deploy task that did not end done.
var ErrRefused = errors.New("cannot roll back")

// Deployer deploys a manifest through a Director task and follows it;
// *bosh.Client has it.
type Deployer interface {
	// Deploy creates or updates the deployment the manifest names.
	Deploy(ctx context.Context, manifest []byte) (bosh.Task, error)
	// WaitTask polls a task until it ends.
	WaitTask(ctx context.Context, id int, poll time.Duration) (bosh.Task, error)
}

// Request is one deploy of an instance's manifest.
type Request struct {
	// Instance is the instance; the task's context id names it.
	Instance string
	// Deployment is the deployment the instance's record names: the
	// manifest must name it.
	Deployment string
	// Manifest is what is deployed.
	Manifest string
	// What names the manifest in errors ("the manifest of backup X").
	What string
	// Why names the deploy in the task's context id: blacksmith-{Why}-{Instance}.
	Why string
	// ContextID, when set, is the task's context id instead (an upgrade's
	// operation, which the broker finds its task by).
	ContextID string
	// Poll, when not zero, follows the task to its end, asking this often.
	Poll time.Duration
}

// Check says whether text is fit to deploy as deployment want: it parses
// and names that deployment. what names it in the error, which wraps
// ErrRefused.
func Check(text, want, what string) error {
	info, err := match.Parse(text)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRefused, what, err)
	}
	if want == "" || info.Name != want {
		return fmt.Errorf("%w: %s names deployment %q, the instance's record names %q", ErrRefused, what, info.Name, want)
	}
	return nil
}

// Deploy checks the manifest, deploys it with d and, when r.Poll is set,
// waits for its task: a task that ended other than done is an error
// wrapping ErrRefused, returned with the task.
func Deploy(ctx context.Context, d Deployer, r Request) (bosh.Task, error) {
	if err := Check(r.Manifest, r.Deployment, r.What); err != nil {
		return bosh.Task{}, err
	}
	cid := r.ContextID
	if cid == "" {
		cid = "blacksmith-" + r.Why + "-" + r.Instance
	}
	task, err := d.Deploy(bosh.WithContextID(ctx, cid), []byte(r.Manifest))
	if err != nil {
		return bosh.Task{}, fmt.Errorf("deploying %s: %w", r.What, err)
	}
	if r.Poll == 0 {
		return task, nil
	}
	id := task.ID
	if task, err = d.WaitTask(ctx, id, r.Poll); err != nil {
		return bosh.Task{ID: id}, fmt.Errorf("waiting for task %d: %w", id, err)
	}
	if task.State != bosh.TaskDone {
		return task, fmt.Errorf("%w: task %d ended %s: %s", ErrRefused, task.ID, task.State, task.Result)
	}
	return task, nil
}
