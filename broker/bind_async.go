package broker

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/pivotal-cf/brokerapi/v11/domain"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// perBinding is Bind for a per_binding plan, under the instance's
// hold: the binding gets secrets of its own, the manifest is rendered with
// it among the instance's live bindings and deployed through a task, and
// the answer is 202; last_operation follows the task and GET answers the
// credentials once it is done. A template that fails to render for the
// binding, or the instance's deployment gone, refuses the bind with nothing
// stored.
func (bd *binder) perBinding(ctx context.Context, id, bid string, rec *vault.Record, plan catalog.Plan, appGUID string, params map[string]any) (domain.Binding, error) {
	async := domain.Binding{IsAsync: true, OperationData: bindOp}
	stored, ok, err := bd.store.Secret(ctx, bindingPath(id, bid))
	if err != nil {
		return domain.Binding{}, bd.report.internal("could not read the binding", err, "instance", id, "binding", bid)
	}
	if ok {
		return bd.repeatPerBinding(ctx, id, bid, stored, appGUID, params)
	}
	if err := bd.ops.notBusy(ctx, id, rec); err != nil {
		return domain.Binding{}, err
	}
	if err := bd.bindings.underMax(ctx, id, plan); err != nil {
		return domain.Binding{}, err
	}
	binding := catalog.Binding{ID: bid, Secrets: bindingSecrets(id, bid)}
	creds, err := bd.credentials(ctx, id, binding, appGUID, rec, params)
	if err != nil {
		return domain.Binding{}, err
	}
	manifest, err := bd.render.forBindings(ctx, id, rec, plan, "", &binding)
	if err != nil {
		return domain.Binding{}, err
	}
	without, err := bd.render.forBindings(ctx, id, rec, plan, bid, nil)
	if err != nil {
		return domain.Binding{}, err
	}
	preview, err := bd.preview(ctx, id, rec, bindOp, without, manifest)
	if err != nil {
		return domain.Binding{}, err
	}
	op := bindingOp{Type: bindOp, State: stateInProgress, ContextID: "blacksmith-bind-" + rand.Text(),
		Description: "bind in progress: deploying the binding's own user", StartedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	doc := map[string]any{
		"credentials": creds, "app_guid": appGUID, "parameters": params, "secrets": binding.Secrets,
		"created": time.Now().UTC().Format(time.RFC3339), "operation": op.doc(),
	}
	if pred := predecessorOf(ctx); pred != "" {
		doc["predecessor_binding_id"] = pred
	}
	err = bd.bindings.store(ctx, id, bid, doc)
	if errors.Is(err, vault.ErrConflict) { // another broker stored this binding first
		return domain.Binding{}, concurrency("another bind of this binding")
	}
	if err != nil {
		return domain.Binding{}, bd.report.internal("could not store the binding", err, "instance", id, "binding", bid)
	}
	bd.log.Info("binding: deploying its own user", "instance", id, "binding", bid)
	wctx, cancel := detached(ctx, bd.timeout)
	defer cancel()
	bd.deployBinding(wctx, id, bid, rec, op, preview)
	bd.history.bindingEvent(wctx, id, eventBind, rec.Deployment(id), bid)
	return async, nil
}

// repeatPerBinding answers a bind of a per_binding binding that exists: the
// same request is 202 while its bind is under way and 200 with the
// credentials once done; a different one, or one whose bind failed or
// that is being unbound, is 409.
func (bd *binder) repeatPerBinding(ctx context.Context, id, bid string, stored map[string]any, appGUID string, params map[string]any) (domain.Binding, error) {
	prev, _ := stored["parameters"].(map[string]any)
	if stored["app_guid"] != appGUID || !sameParams(prev, params) {
		return domain.Binding{}, errBindingConflict
	}
	switch op := opOf(stored); {
	case op.Type == bindOp && op.State == stateInProgress:
		return domain.Binding{IsAsync: true, OperationData: bindOp}, nil
	case op.Type == bindOp && op.State == stateFailed, op.Type == unbindOp && op.State != stateFailed:
		return domain.Binding{}, errBindingConflict
	}
	return domain.Binding{AlreadyExists: true, Credentials: stored["credentials"]}, nil
}

// unbindPerBinding is Unbind for a per_binding plan, under the instance's
// hold: the manifest is rendered without the binding and deployed (its
// user is gone from the service: access revoked), 202; last_operation
// deletes the binding's secrets after a backup once the task is done.
func (bd *binder) unbindPerBinding(ctx context.Context, id, bid string, rec *vault.Record, plan catalog.Plan, stored map[string]any) (domain.UnbindSpec, error) {
	async := domain.UnbindSpec{IsAsync: true, OperationData: unbindOp}
	switch op := opOf(stored); {
	case op.State == stateInProgress && op.Type == unbindOp:
		return async, nil
	case op.State == stateInProgress:
		return domain.UnbindSpec{}, concurrency("its " + op.Type)
	}
	if err := bd.ops.notBusy(ctx, id, rec); err != nil {
		return domain.UnbindSpec{}, err
	}
	manifest, err := bd.render.forBindings(ctx, id, rec, plan, bid, nil)
	if err != nil {
		return domain.UnbindSpec{}, err
	}
	with, err := bd.render.forBindings(ctx, id, rec, plan, "", nil)
	if err != nil {
		return domain.UnbindSpec{}, err
	}
	preview, err := bd.preview(ctx, id, rec, unbindOp, with, manifest)
	if err != nil {
		return domain.UnbindSpec{}, err
	}
	op := bindingOp{Type: unbindOp, State: stateInProgress, ContextID: "blacksmith-unbind-" + rand.Text(),
		Description: "unbind in progress: deploying without the binding's user", StartedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	if err := bd.bindings.setOp(ctx, id, bid, "", op); err != nil {
		return domain.UnbindSpec{}, bd.report.internal("could not record the unbind", err, "instance", id, "binding", bid)
	}
	bd.log.Info("unbinding: deploying without its user", "instance", id, "binding", bid)
	wctx, cancel := detached(ctx, bd.timeout)
	defer cancel()
	bd.deployBinding(wctx, id, bid, rec, op, preview)
	bd.history.bindingEvent(wctx, id, eventUnbind, rec.Deployment(id), bid)
	return async, nil
}

// preview previews a binding operation's deploy of manifest: it may
// change only the binding's own entries, what rendering the manifest
// without the binding (before) and with it (after) changes.
func (bd *binder) preview(ctx context.Context, id string, rec *vault.Record, opType string, before, after []byte) (*operation.Preview, error) {
	dir, err := bd.dirs.of(rec)
	if err != nil {
		return nil, bd.report.internal("the instance's Director is not configured", err, "instance", id)
	}
	return bd.deploy.preview(ctx, dir, operation.Deploy{Operation: opType, Instance: id, Deployment: rec.Deployment(id),
		Manifest: string(after), KeepVariables: true, Guard: operation.Guard{Expected: meant(before, after)}})
}

// deployBinding backs up what runs, stores the manifest as the instance's,
// asks its Director to deploy it and records the task on the binding's
// operation; a failure is recorded as the operation's (last_operation
// answers it).
func (bd *binder) deployBinding(ctx context.Context, id, bid string, rec *vault.Record, op bindingOp, p *operation.Preview) {
	fail := func(desc string, err error) {
		bd.log.Error("binding operation failed", "instance", id, "binding", bid, "operation", op.Type, "error", err)
		op.State, op.Description = stateFailed, desc
		if err := bd.bindings.setOp(ctx, id, bid, op.ContextID, op); err != nil {
			bd.log.Error("could not record a binding operation's failure", "instance", id, "binding", bid, "error", err)
		}
		bd.metrics.outcome(op.Type, stateFailed)
	}
	dir, err := bd.dirs.of(rec)
	if err != nil {
		fail(op.Type+" failed: the instance's Director is not configured", err)
		return
	}
	if _, err := p.BackUp(ctx, bd.store); err != nil {
		fail(op.Type+" failed: could not back up what runs; nothing was deployed", err)
		return
	}
	if err := bd.store.PutManifest(ctx, id, p.Manifest); err != nil {
		fail(op.Type+" failed: could not store the deployment manifest", err)
		return
	}
	task, err := bd.dirs.createTask(ctx, dir, p.Deployment, op.ContextID, op.Type, p.Call(dir.Director))
	if err != nil && task.ID == 0 {
		fail(notAccepted(op.Type, err), err)
		return
	}
	op.TaskID = task.ID
	if err := bd.bindings.setOp(ctx, id, bid, op.ContextID, op); err != nil {
		bd.log.Warn("could not record the binding's task; it is found by its context id", "instance", id, "binding", bid, "error", err)
	}
}
