package redeploy

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
)

// ErrNoDeployer is the error of a redeploy of an instance whose Director
// has no Deployer (or is not configured).
var ErrNoDeployer = errors.New("no director to deploy with")

// ErrRefused wraps what makes a manifest unfit to deploy (none, one for
// another deployment, not YAML) and a deploy task that did not end done.
var ErrRefused = errors.New("cannot roll back")

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
	// Why names the deploy in the task's context id: blacksmith-{Why}-{16
	// random characters} (the instance's id, up to 64 characters, would make
	// it longer than the 64 the Director takes).
	Why string
	// ContextID, when set, is the task's context id instead (an upgrade's
	// operation, which the broker finds its task by).
	ContextID string
	// Poll, when not zero, follows the task to its end, asking this often.
	Poll time.Duration
	// Operation names the deploy in the change guard's refusal ("upgrade",
	// "rollback", "remediation").
	Operation string
	// KeepVariables keeps what runs that the broker did not put there
	// (operation.KeepVariables): for a rendering from the plan, never for
	// a backup's manifest, which is deployed as it was.
	KeepVariables bool
	// Guard judges the Director's diff of the deploy.
	Guard operation.Guard
	// Backups takes the backup of what runs before the deploy; nil: none,
	// and a deploy over a deployment that runs is refused
	// (operation.ErrNoBackup).
	Backups operation.Backer
	// Preview is the deploy's preview when its caller made it already
	// (operation.Prepare); nil: Deploy makes it.
	Preview *operation.Preview
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

// Deploy takes the deploy through the one operation: it checks the
// manifest, previews it with the Director's diff and guards it (a refusal
// is an *operation.RefusedError, nothing deployed), backs up what runs,
// creates its task under its context id (a lost answer found by it, not
// made twice) and, when r.Poll is set, waits for it: a task that ended
// other than done is an error wrapping ErrRefused, returned with the task.
// The preview comes back for the caller's history.
func Deploy(ctx context.Context, d ports.Deployer, r Request) (bosh.Task, *operation.Preview, error) {
	if err := Check(r.Manifest, r.Deployment, r.What); err != nil {
		return bosh.Task{}, nil, err
	}
	p := r.Preview
	if p == nil {
		var err error
		p, err = operation.Prepare(ctx, d, operation.Deploy{Operation: r.Operation, Instance: r.Instance,
			Deployment: r.Deployment, Manifest: r.Manifest, KeepVariables: r.KeepVariables, Guard: r.Guard})
		if err != nil {
			return bosh.Task{}, p, fmt.Errorf("deploying %s: %w", r.What, err)
		}
	}
	if err := operation.CheckHeld(p.Manifest); err != nil {
		return bosh.Task{}, p, fmt.Errorf("deploying %s: %w", r.What, err)
	}
	switch {
	case p.Backup != "" || !p.Exists: // backed up by the caller, or nothing runs
	case r.Backups == nil:
		return bosh.Task{}, p, fmt.Errorf("deploying %s: %w", r.What, operation.ErrNoBackup)
	default:
		if _, err := p.BackUp(ctx, r.Backups); err != nil {
			return bosh.Task{}, p, fmt.Errorf("deploying %s: %w", r.What, err)
		}
	}
	cid := r.ContextID
	if cid == "" {
		cid = "blacksmith-" + r.Why + "-" + rand.Text()[:16]
	}
	task, err := p.Start(ctx, d, cid, nil)
	if err != nil && task.ID == 0 {
		return bosh.Task{}, p, fmt.Errorf("deploying %s: %w", r.What, err)
	}
	if r.Poll == 0 {
		return task, p, nil
	}
	id := task.ID
	if task, err = d.WaitTask(ctx, id, r.Poll); err != nil {
		return bosh.Task{ID: id}, p, fmt.Errorf("waiting for task %d: %w", id, err)
	}
	if task.State != bosh.TaskDone {
		return task, p, fmt.Errorf("%w: task %d ended %s: %s", ErrRefused, task.ID, task.State, task.Result)
	}
	return task, p, nil
}
