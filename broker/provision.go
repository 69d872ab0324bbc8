package broker

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// instanceRequest is what a provision asks for.
type instanceRequest struct {
	id           string
	svc          catalog.Service
	plan         catalog.Plan
	org, space   string
	params       map[string]any
	deployedName string
	context      map[string]string // what the platform says of the instance (OSB context); nil: nothing
}

// Provision answers PUT /v2/service_instances/:id. It records the instance
// (with its operation in progress) and its manifest in Vault, then asks the
// Director to deploy, and answers 202; an identical repeat gets 200 (202
// while the first is still in progress), a different one 409.
func (b *Broker) Provision(ctx context.Context, id string, d domain.ProvisionDetails, async bool) (domain.ProvisionedServiceSpec, error) {
	var none domain.ProvisionedServiceSpec
	if !async {
		return none, apiresponses.ErrAsyncRequired
	}
	svc, plan, err := b.findPlan(d.ServiceID, d.PlanID)
	if err != nil {
		return none, err
	}
	if err := checkMaintenance(maintenanceVersion(d.MaintenanceInfo), plan); err != nil {
		return none, err
	}
	params, err := parseParams(d.RawParameters)
	if err != nil {
		return none, err
	}
	if err := plan.CheckParameters(catalog.Provision, params, nil); err != nil {
		return none, badRequest("%v", err)
	}
	req := instanceRequest{id: id, svc: svc, plan: plan, org: d.OrganizationGUID, space: d.SpaceGUID,
		params: params, deployedName: vault.DeploymentName(plan.ID, id), context: platformContext(d.RawContext)}
	// The cheap checks come before the instance's lease (a refused
	// provision leaves nothing in Vault); reserve checks the limits again,
	// under the lock, before the record is written.
	if err := b.checkLimits(ctx, req); err != nil {
		return none, err
	}
	ctx, unlock, err := b.lockInstance(ctx, id)
	if err != nil {
		return none, err
	}
	defer unlock()
	cur, err := b.opts.Store.Record(ctx, id)
	if err != nil {
		return none, b.internal("could not read the instance's record", err, "instance", id)
	}
	if cur != nil {
		if spec, retry, err := repeatProvision(cur, req); !retry {
			return spec, err
		}
	}
	return b.provision(ctx, req, cur)
}

// repeatProvision answers a provision of an instance that has a record:
// 409 when the request differs, 202 while the first is in progress, 200
// when it exists; retry is true when the first failed and may be retried.
func repeatProvision(cur *vault.Record, req instanceRequest) (spec domain.ProvisionedServiceSpec, retry bool, err error) {
	if !req.sameAs(cur) {
		return spec, false, errInstanceConflict
	}
	op := cur.LastOperation
	switch {
	case op == nil:
		return domain.ProvisionedServiceSpec{AlreadyExists: true}, false, nil
	case op.Type == opTypeDeprovision && op.State == stateInProgress:
		return spec, false, concurrency("a deprovision")
	case op.Type == opTypeProvision && op.State == stateInProgress:
		return domain.ProvisionedServiceSpec{IsAsync: true, OperationData: opTypeProvision}, false, nil
	case op.Type == opTypeProvision && op.State == stateFailed:
		return spec, true, nil
	}
	return domain.ProvisionedServiceSpec{AlreadyExists: true}, false, nil
}

// sameAs says whether the record is what req asks for.
func (req instanceRequest) sameAs(r *vault.Record) bool {
	return r.ServiceID == req.svc.ID && r.PlanID == req.plan.ID &&
		r.OrganizationGUID == req.org && r.SpaceGUID == req.space &&
		sameParams(r.Parameters, req.params)
}

// provision renders the manifest, reserves the instance and starts the deploy.
func (b *Broker) provision(ctx context.Context, req instanceRequest, prev *vault.Record) (domain.ProvisionedServiceSpec, error) {
	var none domain.ProvisionedServiceSpec
	manifest, newSecrets, err := b.render(ctx, req)
	if err != nil {
		return none, err
	}
	op := newOperation(opTypeProvision, "provision in progress: creating the deployment")
	rec := req.record(op)
	rec.Director = b.planDirector(req.plan)
	dir, err := b.directorNamed(rec.Director)
	if err != nil {
		return none, b.internal("the plan's Director is not configured", err, "instance", req.id)
	}
	// A deployment of that name may run already (a provision retried after
	// a failure, one left behind): the same guard as an update's then.
	preview, err := b.preview(ctx, dir, operation.Deploy{Operation: opTypeProvision, Instance: req.id,
		Deployment: req.deployedName, Manifest: string(manifest)})
	if err != nil {
		return none, err
	}
	if err := b.reserve(ctx, req, rec, prev, true); err != nil {
		return none, err
	}
	b.log.Info("provisioning", "instance", req.id, "plan", req.plan.ID, "deployment", req.deployedName)
	wctx, cancel := b.detached(ctx)
	defer cancel()
	task := b.deploy(wctx, req.id, dir, op, newSecrets, preview)
	details := preview.Details()
	details["service_id"], details["plan_id"] = req.svc.ID, req.plan.ID
	b.accepted(wctx, req.id, req.deployedName, op, task, details)
	return domain.ProvisionedServiceSpec{IsAsync: true, OperationData: opTypeProvision}, nil
}

// render renders req's manifest with the instance's secrets. newSecrets are
// the secrets generated for an instance that had none (deploy stores them),
// nil when the stored ones were used.
func (b *Broker) render(ctx context.Context, req instanceRequest) (manifest []byte, newSecrets map[string]any, err error) {
	secrets, stored, err := b.instanceSecrets(ctx, req.id)
	if err != nil {
		return nil, nil, b.internal("could not read the instance's secrets", err, "instance", req.id)
	}
	if manifest, err = b.renderWith(ctx, req, secrets); err != nil {
		return nil, nil, err
	}
	if !stored {
		newSecrets = secrets
	}
	return manifest, newSecrets, nil
}

// renderWith renders req's manifest with secrets and the instance's live bindings.
func (b *Broker) renderWith(ctx context.Context, req instanceRequest, secrets map[string]any) ([]byte, error) {
	data := req.manifestData(secrets)
	var err error
	if data.Bindings, err = b.liveBindings(ctx, req.id, req.plan, "", nil); err != nil {
		return nil, b.internal("could not read the instance's bindings", err, "instance", req.id)
	}
	manifest, err := renderManifest(req.plan.Manifest, data, req.plan.MergeParameters)
	if err != nil {
		return nil, b.renderFailed("manifest", req.plan.ID, req.params, err)
	}
	return manifest, nil
}

// deploy (on dir) stores what op's deploy needs (newSecrets unless nil,
// then the manifest to deploy), backs up what runs and starts the
// previewed deploy's task, whose id it returns; a failure is recorded on
// op (and 0 returned): nothing that runs is replaced without a backup.
func (b *Broker) deploy(ctx context.Context, id string, dir NamedDirector, op *vault.Operation, newSecrets map[string]any, p *operation.Preview) int {
	if _, err := p.BackUp(ctx, b.opts.Store); err != nil {
		b.failOp(ctx, id, op, op.Type+" failed: could not back up what runs; nothing was deployed", err)
		return 0
	}
	if newSecrets != nil { // created once: another broker that generated others first wins, and this deploy fails
		if err := b.opts.Store.CreateSecret(ctx, credentialsPath(id), newSecrets); err != nil {
			b.failOp(ctx, id, op, op.Type+" failed: could not store the instance's secrets", err)
			return 0
		}
	}
	if err := b.opts.Store.PutManifest(ctx, id, p.Manifest); err != nil {
		b.failOp(ctx, id, op, op.Type+" failed: could not store the deployment manifest", err)
		return 0
	}
	return b.startTask(ctx, id, p.Deployment, op, dir, p.Call(dir.Director))
}

// preview reads what dep would change on dir and judges it
// (operation.Prepare): a refusal is a 422 naming each change, a Director
// that cannot be asked a 503-like failure; nothing is written either way.
func (b *Broker) preview(ctx context.Context, dir NamedDirector, dep operation.Deploy) (*operation.Preview, error) {
	dep.Guard.Allow = append(dep.Guard.Allow, b.allowed(ctx, dep.Instance)...)
	p, err := operation.Prepare(ctx, retried{b: b, d: dir}, dep)
	var refused *operation.RefusedError
	switch {
	case errors.As(err, &refused):
		b.log.Warn("refused by the change guard", "instance", dep.Instance, "operation", dep.Operation, "changes", refused.Error())
		b.appendEvent(ctx, dep.Instance, vault.Event{Kind: eventRefused, Deployment: dep.Deployment, Message: refused.Error(),
			Details: p.Details()})
		return nil, guardRefused(refused)
	case errors.Is(err, operation.ErrUnreadable):
		b.log.Error("could not preview the deploy", "instance", dep.Instance, "operation", dep.Operation, "error", err)
		return nil, directorUnavailable(dep.Operation, dir.Name)
	case err != nil: // what runs does not parse as a manifest: nothing is kept or guarded from it
		return nil, b.internal(dep.Operation+" refused: what the instance's deployment runs could not be read as a manifest; nothing was changed",
			err, "instance", dep.Instance)
	}
	return p, nil
}

// allowed are the classes of guarded change an operator allowed for the
// instance now; an allowance that cannot be read allows nothing (logged).
func (b *Broker) allowed(ctx context.Context, id string) []operation.Class {
	names, err := b.opts.Store.AllowedNow(ctx, id, time.Now())
	if err != nil {
		b.log.Warn("could not read the instance's allowance: none applies", "instance", id, "error", err)
	}
	return operation.KnownClasses(names)
}

// retried is a Director's preview, each call asked again after transient
// faults (atDirector).
type retried struct {
	b *Broker
	d NamedDirector
}

func (r retried) Manifest(ctx context.Context, name string) (text string, err error) {
	err = r.b.atDirector(ctx, r.d, "manifest", func(ctx context.Context) (err error) {
		text, err = r.d.Director.Manifest(ctx, name)
		return err
	})
	return text, err
}

func (r retried) Diff(ctx context.Context, name string, manifest []byte) (d bosh.DeploymentDiff, err error) {
	err = r.b.atDirector(ctx, r.d, "diff", func(ctx context.Context) (err error) {
		d, err = r.d.Director.Diff(ctx, name, manifest)
		return err
	})
	return d, err
}

// manifestData is what the plan's manifest template sees.
func (req instanceRequest) manifestData(secrets map[string]any) catalog.ManifestData {
	return catalog.ManifestData{
		DeploymentName: req.deployedName, InstanceID: req.id, ServiceID: req.svc.ID, PlanID: req.plan.ID,
		OrganizationGUID: req.org, SpaceGUID: req.space, Params: req.params, Secrets: secrets, Bindings: []catalog.Binding{},
	}
}

// record is the index record a provision writes.
func (req instanceRequest) record(op *vault.Operation) *vault.Record {
	return &vault.Record{
		ServiceID:        req.svc.ID,
		PlanID:           req.plan.ID,
		DeploymentName:   req.deployedName,
		Created:          time.Now().Unix(),
		OrganizationGUID: req.org,
		SpaceGUID:        req.space,
		Parameters:       req.params,
		LastOperation:    op,
		// The manifest is rendered from the plan's current templates.
		MaintenanceVersion: planVersion(req.plan),
		Context:            req.context,
	}
}

// parseParams reads the request's parameters, which must be a JSON object
// when present; never nil.
func parseParams(raw json.RawMessage) (map[string]any, error) {
	params := map[string]any{}
	if len(raw) == 0 || string(raw) == "null" {
		return params, nil
	}
	if err := json.Unmarshal(raw, &params); err != nil {
		return nil, badRequest("parameters must be a JSON object")
	}
	if params == nil {
		params = map[string]any{}
	}
	return params, nil
}

// sameParams compares parameters as JSON values (a missing map equals an empty one).
func sameParams(a, b map[string]any) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// normalize round-trips v through JSON, so that numbers and nested types compare alike.
func normalize(v map[string]any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}
