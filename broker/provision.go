package broker

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"time"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"

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
	svc, plan, err := findPlan(b.opts.Catalog, d.ServiceID, d.PlanID)
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
	// provision leaves nothing in Vault); limiter.reserve checks the limits again,
	// under the lock, before the record is written.
	if err := b.limits.check(ctx, req); err != nil {
		return none, err
	}
	ctx, unlock, err := b.locks.lock(ctx, id)
	if err != nil {
		return none, err
	}
	defer unlock()
	cur, err := b.opts.Store.Record(ctx, id)
	if err != nil {
		return none, b.report.internal("could not read the instance's record", err, "instance", id)
	}
	if cur != nil {
		if spec, retry, err := repeatProvision(cur, req); !retry {
			return spec, err
		}
	}
	return b.provision.provision(ctx, req, cur)
}

// repeatProvision answers a provision of an instance that has a record:
// 409 when the request differs, 202 while the first is in progress, 200
// when it exists; retry is true when the first failed and may be retried.
func repeatProvision(cur *vault.Record, req instanceRequest) (spec domain.ProvisionedServiceSpec, retry bool, err error) {
	if !req.sameAs(cur) {
		return spec, false, errInstanceConflict
	}
	op := cur.LastOperation
	exists := domain.ProvisionedServiceSpec{AlreadyExists: true, Metadata: versionLabels(cur.MaintenanceVersion)}
	switch {
	case op == nil:
		return exists, false, nil
	case op.Type == opTypeDeprovision && op.State == stateInProgress:
		return spec, false, concurrency("a deprovision")
	case op.Type == opTypeProvision && op.State == stateInProgress:
		return domain.ProvisionedServiceSpec{IsAsync: true, OperationData: opTypeProvision, Metadata: versionLabels(planVersion(req.plan))}, false, nil
	case op.Type == opTypeProvision && op.State == stateFailed:
		return spec, true, nil
	}
	return exists, false, nil
}

// sameAs says whether the record is what req asks for.
func (req instanceRequest) sameAs(r *vault.Record) bool {
	return r.ServiceID == req.svc.ID && r.PlanID == req.plan.ID &&
		r.OrganizationGUID == req.org && r.SpaceGUID == req.space &&
		sameParams(r.Parameters, req.params)
}

// provisioner provisions and updates instances (behind Provision and
// Update): it renders the manifest, previews it, reserves the record within
// the limits and starts the deploy.
type provisioner struct {
	catalog *catalog.Catalog
	store   Records
	dirs    *directors
	render  *renderer
	deploy  *deployer
	limits  *limiter
	history *history
	timeout time.Duration // Options.DirectorTimeout
	report  reporter
	log     *slog.Logger
}

// provision renders the manifest, reserves the instance and starts the deploy.
func (p *provisioner) provision(ctx context.Context, req instanceRequest, prev *vault.Record) (domain.ProvisionedServiceSpec, error) {
	var none domain.ProvisionedServiceSpec
	manifest, newSecrets, err := p.render.render(ctx, req)
	if err != nil {
		return none, err
	}
	op := newOperation(opTypeProvision, "provision in progress: creating the deployment")
	rec := req.record(op)
	rec.Director = p.dirs.forPlan(req.plan)
	dir, err := p.dirs.named(rec.Director)
	if err != nil {
		return none, p.report.internal("the plan's Director is not configured", err, "instance", req.id)
	}
	// A deployment of that name may run already (a provision retried after
	// a failure, one left behind): the same guard as an update's then.
	preview, err := p.deploy.preview(ctx, dir, operation.Deploy{Operation: opTypeProvision, Instance: req.id,
		Deployment: req.deployedName, Manifest: string(manifest)})
	if err != nil {
		return none, err
	}
	if err := p.limits.reserve(ctx, req, rec, prev, true); err != nil {
		return none, err
	}
	p.log.Info("provisioning", "instance", req.id, "plan", req.plan.ID, "deployment", req.deployedName)
	wctx, cancel := detached(ctx, p.timeout)
	defer cancel()
	task := p.deploy.deploy(wctx, req.id, dir, op, newSecrets, preview)
	details := preview.Details()
	details["service_id"], details["plan_id"] = req.svc.ID, req.plan.ID
	p.history.accepted(wctx, req.id, req.deployedName, op, task, details)
	return domain.ProvisionedServiceSpec{IsAsync: true, OperationData: opTypeProvision, Metadata: versionLabels(planVersion(req.plan))}, nil
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
