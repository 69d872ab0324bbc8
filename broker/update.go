package broker

import (
	"cmp"
	"context"
	"errors"
	"maps"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Update answers PATCH /v2/service_instances/:id. A plan change is refused
// with 422 PlanChangeNotSupported unless the new plan is updatable (the
// catalog's `updatable: true` lets instances change to a plan), and is
// subject to the new plan's limit. New parameters are
// deep-merged over the recorded ones (as the manifest merges them). The
// manifest is rendered again (same deployment name, same secrets; none is
// generated for an instance without stored ones: the running manifest's
// configuration-server variables are kept, and a template that needs a
// secret where none runs is refused with 422), previewed with the
// Director's diff and guarded (422 naming each change it does not mean),
// the running manifest backed up and the new one deployed; 202. The record
// takes the new plan and parameters once the deploy's task has succeeded.
// maintenance_info, when sent, must be the plan's version (422 MaintenanceInfoConflict); sent to an
// instance rendered from another version, it makes the update an upgrade
// (rendered again from the plan's current templates and deployed, even with
// nothing else changed). A request that changes nothing is answered 200 at
// once; while an update is in progress,
// the same update sent again is answered 202 (as the spec wants), any other
// 422 ConcurrencyError. service_id and plan_id are judged as everywhere
// (judgeIDs).
func (b *Broker) Update(ctx context.Context, id string, d domain.UpdateDetails, async bool) (domain.UpdateServiceSpec, error) {
	var none domain.UpdateServiceSpec
	if !async {
		return none, apiresponses.ErrAsyncRequired
	}
	ctx, unlock, err := b.locks.existing(ctx, id, errNotFound)
	if err != nil {
		return none, err
	}
	defer unlock()
	rec, err := b.records.read(ctx, id, errNotFound)
	if err != nil {
		return none, err
	}
	if rec.Adopted {
		return none, errAwaitsAdoption
	}
	if rec.Retiring != nil {
		return none, errRetiring
	}
	if err := judgeIDs(rec, b.opts.Catalog, d.ServiceID, d.PlanID); err != nil {
		return none, err
	}
	busy := rec.LastOperation != nil && rec.LastOperation.State == stateInProgress
	if busy && rec.LastOperation.Type != opTypeUpdate {
		return none, concurrency(rec.LastOperation.Type)
	}
	if err := b.bindOps.noneUnderWay(ctx, id, rec); err != nil {
		return none, err
	}
	// What the record asks: while an update is in progress, what it asks
	// (its pending change); else what was last applied. A failed update
	// applied nothing: the same update sent again deploys again.
	asked := rec
	if busy && rec.LastOperation.Pending != nil {
		asked = rec.Clone()
		rec.LastOperation.Pending.Apply(asked)
	}
	req, err := b.provision.updateRequest(id, asked, d)
	if err != nil && !busy {
		return none, err
	}
	// An update carrying the plan's maintenance_info version to an instance
	// rendered from another is an upgrade, whatever else it changes.
	upgrade := err == nil && maintenanceVersion(d.MaintenanceInfo) != "" && asked.MaintenanceVersion != planVersion(req.plan)
	unchanged := err == nil && req.plan.ID == asked.PlanID && sameParams(req.params, asked.Parameters) && !upgrade
	failed := rec.LastOperation != nil && rec.LastOperation.Type == opTypeUpdate && rec.LastOperation.State == stateFailed
	switch {
	case busy && unchanged: // the update in progress, sent again: the spec wants 202 and its operation
		return domain.UpdateServiceSpec{IsAsync: true, OperationData: opTypeUpdate, Metadata: versionLabels(asked.MaintenanceVersion)}, nil
	case busy:
		return none, concurrency(opTypeUpdate)
	case unchanged && !failed:
		return none, b.provision.keepContext(ctx, id, rec, req.context)
	}
	return b.provision.update(ctx, req, rec)
}

// updateRequest checks an update against the catalog and returns what it asks for.
func (p *provisioner) updateRequest(id string, rec *vault.Record, d domain.UpdateDetails) (instanceRequest, error) {
	planID := d.PlanID
	if planID == "" {
		planID = rec.PlanID
	}
	svc, plan, err := findPlan(p.catalog, rec.ServiceID, planID)
	if err != nil {
		return instanceRequest{}, err
	}
	if plan.ID != rec.PlanID && !plan.Updatable {
		return instanceRequest{}, apiresponses.ErrPlanChangeNotSupported
	}
	if err := checkMaintenance(maintenanceVersion(d.MaintenanceInfo), plan); err != nil {
		return instanceRequest{}, err
	}
	params, err := parseParams(d.RawParameters)
	if err != nil {
		return instanceRequest{}, err
	}
	merged := deepMerge(rec.Parameters, params)
	if err := plan.CheckParameters(catalog.Update, params, merged); err != nil {
		return instanceRequest{}, badRequest("%v", err)
	}
	return instanceRequest{
		id: id, svc: svc, plan: plan, org: rec.OrganizationGUID, space: rec.SpaceGUID,
		params: merged, deployedName: rec.Deployment(id), context: platformContext(d.RawContext),
	}, nil
}

// keepContext records the context an update that changes nothing else
// carries, when it differs from the record's (an instance or space renamed
// on the platform); nothing is deployed.
func (p *provisioner) keepContext(ctx context.Context, id string, rec *vault.Record, pc map[string]string) error {
	if pc == nil || maps.Equal(pc, rec.Context) {
		return nil
	}
	_, err := p.store.Update(ctx, map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
		if cur == nil || maps.Equal(pc, cur.Context) {
			return nil, nil
		}
		next := cur.Clone()
		next.Context = pc
		return next, nil
	}})
	if err != nil {
		return p.report.internal("could not record the instance's context", err, "instance", id)
	}
	return nil
}

// update renders the new manifest, previews it against what runs (the
// change guard: 422 naming what it would change and does not mean), records
// the update as pending and starts the deploy: the record takes the new
// plan, parameters and version only once its task has succeeded (settler.finish).
func (p *provisioner) update(ctx context.Context, req instanceRequest, rec *vault.Record) (domain.UpdateServiceSpec, error) {
	var none domain.UpdateServiceSpec
	if have := cmp.Or(rec.Director, p.dirs.forPlan(catalog.Plan{})); p.dirs.several() && p.dirs.forPlan(req.plan) != have {
		return none, badRequest("plan %s is deployed by BOSH Director %q and this instance lives on %q: an update cannot move an instance to another Director",
			req.plan.ID, p.dirs.forPlan(req.plan), have)
	}
	dir, err := p.dirs.of(rec)
	if err != nil {
		return none, p.report.internal("the instance's Director is not configured", err, "instance", req.id)
	}
	secrets, err := p.render.heldSecrets(ctx, req.id)
	if err != nil {
		return none, err
	}
	manifest, err := p.render.with(ctx, req, secrets)
	if err != nil {
		return none, err
	}
	preview, err := p.deploy.preview(ctx, dir, operation.Deploy{Operation: opTypeUpdate, Instance: req.id, Deployment: req.deployedName,
		Manifest: string(manifest), KeepVariables: true, Guard: operation.Guard{Expected: p.render.meantByUpdate(ctx, req, rec, secrets, manifest)}})
	if err != nil {
		return none, err
	}
	if err := operation.CheckHeld(preview.Manifest); err != nil {
		p.log.Warn("update refused: the broker holds no secrets of the instance", "instance", req.id, "error", err)
		return none, secretsNotHeld(opTypeUpdate)
	}
	op := newOperation(opTypeUpdate, "update in progress: deploying the new manifest")
	op.Pending = &vault.Pending{PlanID: req.plan.ID, Parameters: req.params, MaintenanceVersion: planVersion(req.plan), // rendered from the plan's current templates
		Context: req.context}
	next := rec.Clone()
	next.LastOperation = op
	if err := p.limits.reserve(ctx, req, next, rec, req.plan.ID != rec.PlanID); err != nil {
		if errors.Is(err, errInstanceConflict) {
			return none, concurrency("another operation")
		}
		return none, err
	}
	p.log.Info("updating", "instance", req.id, "plan", req.plan.ID, "deployment", req.deployedName)
	wctx, cancel := detached(ctx, p.timeout)
	defer cancel()
	task := p.deploy.deploy(wctx, req.id, dir, op, nil, preview) // an update generates no secret over what runs
	details := preview.Details()
	details["service_id"], details["plan_id"] = req.svc.ID, req.plan.ID
	if req.plan.ID != rec.PlanID {
		details["previous_plan_id"] = rec.PlanID
	}
	if v := op.Pending.MaintenanceVersion; v != rec.MaintenanceVersion {
		details["maintenance_info_version"], details["previous_maintenance_info_version"] = v, rec.MaintenanceVersion
	}
	p.history.accepted(wctx, req.id, req.deployedName, op, task, details)
	return domain.UpdateServiceSpec{IsAsync: true, OperationData: opTypeUpdate, Metadata: versionLabels(op.Pending.MaintenanceVersion)}, nil
}

// meant is the changes between two renderings (nil when either does not
// parse: nothing meant).
func meant(before, after []byte) []operation.Change {
	changes, err := operation.Compare(string(before), string(after))
	if err != nil {
		return nil
	}
	return changes
}
