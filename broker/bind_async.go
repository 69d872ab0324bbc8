package broker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// bindPerBinding is Bind for a per_binding plan, under the instance's
// hold: the binding gets secrets of its own, the manifest is rendered with
// it among the instance's live bindings and deployed through a task, and
// the answer is 202; last_operation follows the task and GET answers the
// credentials once it is done. A template that fails to render for the
// binding, or the instance's deployment gone, refuses the bind with nothing
// stored.
func (b *Broker) bindPerBinding(ctx context.Context, id, bid string, rec *vault.Record, plan catalog.Plan, appGUID string, params map[string]any) (domain.Binding, error) {
	async := domain.Binding{IsAsync: true, OperationData: bindOp}
	stored, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, bid))
	if err != nil {
		return domain.Binding{}, b.internal("could not read the binding", err, "instance", id, "binding", bid)
	}
	if ok {
		return b.repeatPerBinding(ctx, id, bid, stored, appGUID, params)
	}
	if err := b.notBusy(ctx, id, rec); err != nil {
		return domain.Binding{}, err
	}
	if err := b.underMaxBindings(ctx, id, plan); err != nil {
		return domain.Binding{}, err
	}
	binding := catalog.Binding{ID: bid, Secrets: bindingSecrets(id, bid)}
	creds, err := b.credentials(ctx, id, binding, appGUID, rec, params)
	if err != nil {
		return domain.Binding{}, err
	}
	manifest, err := b.renderBindings(ctx, id, rec, plan, "", &binding)
	if err != nil {
		return domain.Binding{}, err
	}
	without, err := b.renderBindings(ctx, id, rec, plan, bid, nil)
	if err != nil {
		return domain.Binding{}, err
	}
	preview, err := b.previewBinding(ctx, id, rec, bindOp, without, manifest)
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
	err = b.storeBinding(ctx, id, bid, doc)
	if errors.Is(err, vault.ErrConflict) { // another broker stored this binding first
		return domain.Binding{}, concurrency("another bind of this binding")
	}
	if err != nil {
		return domain.Binding{}, b.internal("could not store the binding", err, "instance", id, "binding", bid)
	}
	b.log.Info("binding: deploying its own user", "instance", id, "binding", bid)
	wctx, cancel := b.detached(ctx)
	defer cancel()
	b.deployBinding(wctx, id, bid, rec, op, preview)
	b.bindingEvent(wctx, id, eventBind, rec.Deployment(id), bid)
	return async, nil
}

// repeatPerBinding answers a bind of a per_binding binding that exists: the
// same request is 202 while its bind is under way and 200 with the
// credentials once done; a different one, or one whose bind failed or
// that is being unbound, is 409.
func (b *Broker) repeatPerBinding(ctx context.Context, id, bid string, stored map[string]any, appGUID string, params map[string]any) (domain.Binding, error) {
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
func (b *Broker) unbindPerBinding(ctx context.Context, id, bid string, rec *vault.Record, plan catalog.Plan, stored map[string]any) (domain.UnbindSpec, error) {
	async := domain.UnbindSpec{IsAsync: true, OperationData: unbindOp}
	switch op := opOf(stored); {
	case op.State == stateInProgress && op.Type == unbindOp:
		return async, nil
	case op.State == stateInProgress:
		return domain.UnbindSpec{}, concurrency("its " + op.Type)
	}
	if err := b.notBusy(ctx, id, rec); err != nil {
		return domain.UnbindSpec{}, err
	}
	manifest, err := b.renderBindings(ctx, id, rec, plan, bid, nil)
	if err != nil {
		return domain.UnbindSpec{}, err
	}
	with, err := b.renderBindings(ctx, id, rec, plan, "", nil)
	if err != nil {
		return domain.UnbindSpec{}, err
	}
	preview, err := b.previewBinding(ctx, id, rec, unbindOp, with, manifest)
	if err != nil {
		return domain.UnbindSpec{}, err
	}
	op := bindingOp{Type: unbindOp, State: stateInProgress, ContextID: "blacksmith-unbind-" + rand.Text(),
		Description: "unbind in progress: deploying without the binding's user", StartedAt: time.Now().UTC().Format(time.RFC3339Nano)}
	if err := b.setBindingOp(ctx, id, bid, "", op); err != nil {
		return domain.UnbindSpec{}, b.internal("could not record the unbind", err, "instance", id, "binding", bid)
	}
	b.log.Info("unbinding: deploying without its user", "instance", id, "binding", bid)
	wctx, cancel := b.detached(ctx)
	defer cancel()
	b.deployBinding(wctx, id, bid, rec, op, preview)
	b.bindingEvent(wctx, id, eventUnbind, rec.Deployment(id), bid)
	return async, nil
}

// noBindingUnderWay refuses (422 ConcurrencyError) an instance's update or
// deprovision while a bind or unbind of a per_binding plan is under way on
// it (one nobody polls any more is followed to its end first).
func (b *Broker) noBindingUnderWay(ctx context.Context, id string, rec *vault.Record) error {
	if _, plan, ok := b.opts.Catalog.Plan(rec.PlanID); !ok || !plan.PerBinding() {
		return nil
	}
	return b.otherBindingOps(ctx, id, rec, "a binding's ")
}

// notBusy refuses (422 ConcurrencyError) a binding's bind or unbind while
// the instance's own operation, or another binding's, is under way (a
// binding's operation nobody polls any more is followed to its end first).
func (b *Broker) notBusy(ctx context.Context, id string, rec *vault.Record) error {
	if rec.OperationInProgress() {
		return concurrency(rec.LastOperation.Type)
	}
	return b.otherBindingOps(ctx, id, rec, "another binding's ")
}

// otherBindingOps is a ConcurrencyError naming what (e.g. "a binding's ")
// when a binding operation of the instance is under way.
func (b *Broker) otherBindingOps(ctx context.Context, id string, rec *vault.Record, what string) error {
	ids, err := b.bindingIDs(ctx, id)
	if err != nil {
		return b.internal("could not read the instance's bindings", err, "instance", id)
	}
	for _, other := range ids {
		doc, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, other))
		if err != nil {
			return b.internal("could not read a binding", err, "instance", id, "binding", other)
		}
		if !ok || opOf(doc).State != stateInProgress {
			continue
		}
		if last, _ := b.followBinding(ctx, id, other, rec, doc); last.State == domain.InProgress {
			return concurrency(what + opOf(doc).Type)
		}
	}
	return nil
}

// renderBindings renders the instance's manifest as a provision or update
// would, with its live bindings, skip left out and extra added; the
// instance's stored manifest is left alone (deployBinding stores what it
// deploys).
func (b *Broker) renderBindings(ctx context.Context, id string, rec *vault.Record, plan catalog.Plan, skip string, extra *catalog.Binding) ([]byte, error) {
	secrets, stored, err := b.opts.Store.Secret(ctx, credentialsPath(id))
	if err != nil {
		return nil, b.internal("could not read the instance's secrets", err, "instance", id)
	}
	if !stored && plan.Manifest.UsesSecrets() {
		b.log.Warn("binding operation refused: the instance has no secrets in Vault for its manifest", "instance", id, "path", credentialsPath(id))
		return nil, secretsNotHeld("the binding's operation was")
	}
	bindings, err := b.liveBindings(ctx, id, plan, skip, extra)
	if err != nil {
		return nil, b.internal("could not read the instance's bindings", err, "instance", id)
	}
	manifest, err := renderManifest(plan.Manifest, catalog.ManifestData{
		DeploymentName: rec.Deployment(id), InstanceID: id, ServiceID: rec.ServiceID, PlanID: plan.ID,
		OrganizationGUID: rec.OrganizationGUID, SpaceGUID: rec.SpaceGUID, Params: instanceParams(rec), Secrets: secrets,
		Bindings: bindings,
	}, plan.MergeParameters)
	if err != nil {
		return nil, b.internal("the plan's manifest template could not be rendered for the binding", err, "plan", plan.ID)
	}
	return manifest, nil
}

// previewBinding previews a binding operation's deploy of manifest: it may
// change only the binding's own entries, what rendering the manifest
// without the binding (before) and with it (after) changes.
func (b *Broker) previewBinding(ctx context.Context, id string, rec *vault.Record, opType string, before, after []byte) (*operation.Preview, error) {
	dir, err := b.directorOf(rec)
	if err != nil {
		return nil, b.internal("the instance's Director is not configured", err, "instance", id)
	}
	return b.preview(ctx, dir, operation.Deploy{Operation: opType, Instance: id, Deployment: rec.Deployment(id),
		Manifest: string(after), KeepVariables: true, Guard: operation.Guard{Expected: meant(before, after)}})
}

// deployBinding backs up what runs, stores the manifest as the instance's,
// asks its Director to deploy it and records the task on the binding's
// operation; a failure is recorded as the operation's (last_operation
// answers it).
func (b *Broker) deployBinding(ctx context.Context, id, bid string, rec *vault.Record, op bindingOp, p *operation.Preview) {
	fail := func(desc string, err error) {
		b.log.Error("binding operation failed", "instance", id, "binding", bid, "operation", op.Type, "error", err)
		op.State, op.Description = stateFailed, desc
		if err := b.setBindingOp(ctx, id, bid, op.ContextID, op); err != nil {
			b.log.Error("could not record a binding operation's failure", "instance", id, "binding", bid, "error", err)
		}
		b.opts.Metrics.outcome(op.Type, stateFailed)
	}
	dir, err := b.directorOf(rec)
	if err != nil {
		fail(op.Type+" failed: the instance's Director is not configured", err)
		return
	}
	if _, err := p.BackUp(ctx, b.opts.Store); err != nil {
		fail(op.Type+" failed: could not back up what runs; nothing was deployed", err)
		return
	}
	if err := b.opts.Store.PutManifest(ctx, id, p.Manifest); err != nil {
		fail(op.Type+" failed: could not store the deployment manifest", err)
		return
	}
	task, err := b.createTask(ctx, dir, p.Deployment, op.ContextID, op.Type, p.Call(dir.Director))
	if err != nil && task.ID == 0 {
		fail(notAccepted(op.Type, err), err)
		return
	}
	op.TaskID = task.ID
	if err := b.setBindingOp(ctx, id, bid, op.ContextID, op); err != nil {
		b.log.Warn("could not record the binding's task; it is found by its context id", "instance", id, "binding", bid, "error", err)
	}
}

// setBindingOp records op on the binding's document, provided its current
// operation has contextID ("": whatever it has).
func (b *Broker) setBindingOp(ctx context.Context, id, bid, contextID string, op bindingOp) error {
	return b.opts.Store.UpdateSecret(ctx, bindingPath(id, bid), func(cur map[string]any, ok bool) (map[string]any, error) {
		if !ok || (contextID != "" && opOf(cur).ContextID != contextID) {
			return nil, nil
		}
		next := make(map[string]any, len(cur))
		for k, v := range cur {
			next[k] = v
		}
		next["operation"] = op.doc()
		return next, nil
	})
}

// followBinding takes a binding's operation in progress further from its
// task: done or failed is recorded (a finished unbind deletes the binding's
// secrets after a backup and unlists it); the answer is last_operation's.
func (b *Broker) followBinding(ctx context.Context, id, bid string, rec *vault.Record, doc map[string]any) (domain.LastOperation, error) {
	op := opOf(doc)
	if op.State != stateInProgress {
		return bindingAnswer(op), nil
	}
	dir, err := b.directorOf(rec)
	if err != nil {
		return inProgress(op.Type + " in progress: the instance's Director is not configured"), nil
	}
	var task bosh.Task
	if op.TaskID != 0 {
		task, err = dir.Director.Task(ctx, op.TaskID)
	} else {
		task, err = operation.Find(ctx, operation.OfDeployment(dir.Reader, rec.Deployment(id)), op.ContextID)
	}
	switch {
	case err != nil && !errors.Is(err, bosh.ErrTaskNotFound):
		b.log.Warn("could not ask about a binding's task", "instance", id, "binding", bid, "error", err)
		return inProgress(op.Type + " in progress: the BOSH Director cannot be reached right now"), nil
	case task.ID == 0 || errors.Is(err, bosh.ErrTaskNotFound):
		if started, perr := time.Parse(time.RFC3339Nano, op.StartedAt); perr == nil && time.Since(started) < b.opts.LostTaskGrace {
			return inProgress(op.Type + " in progress: waiting for the BOSH task to start"), nil
		}
		op.State, op.Description = stateFailed, op.Type+" failed: the BOSH Director has no task for it; please try again"
	case !task.Terminal():
		return inProgress(taskDescription(op.Type, task)), nil
	case task.Succeeded() && op.Type == unbindOp:
		backup, err := b.opts.Store.DeleteSecretsBackedUp(ctx, id, bindingPath(id, bid))
		if err != nil {
			return inProgress("unbind in progress: the binding's secrets could not be deleted yet"), fmt.Errorf("deleting binding %s: %w", bid, err)
		}
		if err := b.listBinding(ctx, id, bid, false); err != nil {
			b.log.Warn("could not unlist a deleted binding", "instance", id, "binding", bid, "error", err)
		}
		b.log.Info("unbound: its user is gone from the deployment", "instance", id, "binding", bid, "backup", backup)
		b.opts.Metrics.outcome(unbindOp, stateSucceeded)
		return domain.LastOperation{State: domain.Succeeded, Description: taskDescription(op.Type, task)}, nil
	default:
		op.TaskID, op.Description = task.ID, taskDescription(op.Type, task)
		op.State = stateFailed
		if task.Succeeded() {
			op.State = stateSucceeded
		} else {
			b.recordRunning(ctx, id, rec) // not the manifest that failed
		}
	}
	if err := b.setBindingOp(ctx, id, bid, op.ContextID, op); err != nil {
		return inProgress(op.Type + " in progress"), fmt.Errorf("recording binding %s's outcome: %w", bid, err)
	}
	b.opts.Metrics.outcome(op.Type, op.State)
	return bindingAnswer(op), nil
}

// bindingAnswer is last_operation's answer for a binding operation that ended.
func bindingAnswer(op bindingOp) domain.LastOperation {
	switch op.State {
	case stateFailed:
		return domain.LastOperation{State: domain.Failed, Description: op.Description}
	case stateInProgress:
		return inProgress(op.Description)
	}
	if op.Description == "" {
		op.Description = "the binding exists"
	}
	return domain.LastOperation{State: domain.Succeeded, Description: op.Description}
}

// errBindingGone is last_operation's 410 for a binding whose asynchronous
// unbind finished (the platform takes it as the unbind's success).
var errBindingGone = apiresponses.ErrBindingDoesNotExist
