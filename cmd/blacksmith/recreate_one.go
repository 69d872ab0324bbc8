package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The states of one instance in recreate-all.
const (
	recreated      = "recreated"
	recreateFailed = "failed"
	recreateSkip   = "skipped" // busy: another operation holds it
	wouldRecreate  = "would_recreate"
	notStarted     = "not_started" // the roll stopped before it
)

// recreateResult is what became of one instance.
type recreateResult struct {
	InstanceID string `json:"instance_id"`
	Deployment string `json:"deployment"`
	Director   string `json:"director,omitempty"`
	PlanID     string `json:"plan_id"`
	Canary     bool   `json:"canary,omitempty"`
	State      string `json:"state"`
	TaskID     int    `json:"task_id,omitempty"`
	Reason     string `json:"reason,omitempty"`
}

// recreateTarget is one instance to recreate, as its record says.
type recreateTarget struct {
	id       string
	rec      *vault.Record
	director *bosh.Client
}

// recreator recreates one instance through the steps every operation
// takes: the broker's hold of the instance (no OSB request, fleet upgrade
// or other errand runs on it meanwhile), its last operation marked in
// progress by check-and-set (operation.Mark), the Director's task created
// under the operation's context id (operation.Start: a lost answer never
// makes a second task), the task id recorded, the task waited on, the
// outcome settled (operation.ChangeOp) and written to its history. A
// recreate redeploys the manifest the Director holds: nothing is rendered,
// so there is no change to preview or guard. Should the command die, the
// daemon settles the operation from its task as it does any other.
type recreator struct {
	store   *vault.Store
	hold    func(context.Context, string) (context.Context, func(), error)
	dryRun  bool
	poll    time.Duration
	timeout time.Duration // bounds the wait for one task
	log     *slog.Logger
}

func (rc *recreator) one(ctx context.Context, t recreateTarget, r *recreateResult) {
	if rc.dryRun {
		r.State, r.Reason = wouldRecreate, "every VM of the deployment would be recreated"
		return
	}
	hctx, release, err := rc.hold(ctx, t.id)
	if errors.Is(err, broker.ErrInstanceBusy) {
		r.State, r.Reason = recreateSkip, "another operation holds the instance; nothing done"
		return
	}
	if err != nil {
		r.State, r.Reason = recreateFailed, "holding the instance: "+err.Error()
		return
	}
	defer release()
	rec, err := rc.store.Record(hctx, t.id)
	switch {
	case err != nil || rec == nil:
		r.State, r.Reason = recreateFailed, fmt.Sprintf("reading its record: %v", orGone(err))
		return
	case rec.LastOperation != nil && rec.LastOperation.State == vault.OperationInProgress:
		r.State, r.Reason = recreateSkip, "its "+rec.LastOperation.Type+" operation is in progress; nothing done"
		return
	}
	contextID := "blacksmith-recreate-" + rand.Text()[:16]
	op := &vault.Operation{Type: "update", State: vault.OperationInProgress, ContextID: contextID,
		Description: "recreate in progress: every VM of the deployment recreated", StartedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	if err := operation.Mark(hctx, rc.store, t.id, rec, func(cur *vault.Record) *vault.Record {
		next := cur.Clone()
		next.LastOperation = op
		return next
	}); err != nil {
		r.State, r.Reason = recreateSkip, "marking its operation: "+err.Error()+"; nothing done"
		return
	}
	// From the task on, a stop must not cut the recording of what was started.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(hctx), rc.timeout)
	defer cancel()
	task, err := operation.Start(wctx, contextID, operation.OfDeployment(t.director, rec.DeploymentName), nil,
		func(ctx context.Context) (bosh.Task, error) {
			return t.director.ChangeState(ctx, rec.DeploymentName, bosh.StateRecreate)
		})
	if task.ID == 0 {
		rc.settle(wctx, t, contextID, r, recreateFailed, "the Director did not take the recreate: "+errText(err))
		return
	}
	r.TaskID = task.ID
	if err := operation.ChangeOp(wctx, rc.store, t.id, contextID, func(n *vault.Record) { n.LastOperation.TaskID = task.ID }); err != nil {
		rc.log.Warn("could not record the recreate's task; the daemon finds it by its context id", "instance", t.id, "task", task.ID, "error", err)
	}
	done, err := t.director.WaitTask(wctx, task.ID, rc.poll)
	switch {
	case err != nil:
		r.State, r.Reason = recreateFailed, fmt.Sprintf("waiting for task %d: %v (its operation stays in progress; the daemon settles it)", task.ID, err)
	case done.Succeeded():
		rc.settle(wctx, t, contextID, r, recreated, fmt.Sprintf("every VM recreated (task %d)", task.ID))
	default:
		rc.settle(wctx, t, contextID, r, recreateFailed, fmt.Sprintf("task %d ended %s: %s", task.ID, done.State, done.Result))
	}
}

// settle ends the operation as state and writes it to the instance's history.
func (rc *recreator) settle(ctx context.Context, t recreateTarget, contextID string, r *recreateResult, state, reason string) {
	r.State, r.Reason = state, reason
	opState := vault.OperationSucceeded
	if state != recreated {
		opState = vault.OperationFailed
	}
	if err := operation.ChangeOp(ctx, rc.store, t.id, contextID, func(n *vault.Record) {
		n.LastOperation.State, n.LastOperation.Description = opState, "recreate: "+reason
	}); err != nil {
		rc.log.Warn("could not settle the recreate's operation", "instance", t.id, "error", err)
	}
	details := map[string]string{"state": state}
	if r.TaskID != 0 {
		details["task"] = fmt.Sprint(r.TaskID)
	}
	if err := rc.store.AppendEvent(ctx, t.id, vault.Event{Kind: "recreated", Actor: "operator", Deployment: t.rec.DeploymentName,
		Message: "recreate-all-service-instances: " + reason, Details: details}); err != nil {
		rc.log.Warn("could not write the recreate to the instance's history", "instance", t.id, "error", err)
	}
}

func orGone(err error) error {
	if err == nil {
		return errors.New("the record is gone")
	}
	return err
}

func errText(err error) string {
	if err == nil {
		return "no task"
	}
	return err.Error()
}
