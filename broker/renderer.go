package broker

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// renderer renders an instance's manifest from its plan's template, its
// secrets (secrets.go) and, for a per_binding plan, its live bindings.
type renderer struct {
	catalog  *catalog.Catalog
	secrets  Secrets
	bindings *bindingStore
	report   reporter
	log      *slog.Logger
}

// render renders req's manifest with the instance's secrets. newSecrets are
// the secrets generated for an instance that had none (deploy stores them),
// nil when the stored ones were used.
func (r *renderer) render(ctx context.Context, req instanceRequest) (manifest []byte, newSecrets map[string]any, err error) {
	secrets, stored, err := r.instanceSecrets(ctx, req.id)
	if err != nil {
		return nil, nil, r.report.internal("could not read the instance's secrets", err, "instance", req.id)
	}
	if manifest, err = r.with(ctx, req, secrets); err != nil {
		return nil, nil, err
	}
	if !stored {
		newSecrets = secrets
	}
	return manifest, newSecrets, nil
}

// with renders req's manifest with secrets and the instance's live bindings.
func (r *renderer) with(ctx context.Context, req instanceRequest, secrets map[string]any) ([]byte, error) {
	data := req.manifestData(secrets)
	var err error
	if data.Bindings, err = r.bindings.live(ctx, req.id, req.plan, "", nil); err != nil {
		return nil, r.report.internal("could not read the instance's bindings", err, "instance", req.id)
	}
	manifest, err := renderManifest(req.plan.Manifest, data, req.plan.MergeParameters)
	if err != nil {
		return nil, r.report.renderFailed("manifest", req.plan.ID, req.params, err)
	}
	return manifest, nil
}

// meantByUpdate is what an update means to change: what rendering the
// manifest from the instance's applied plan and parameters (with the same
// secrets, bindings and templates) and from what it asks differ in. A
// record whose own rendering fails means nothing: every guarded change
// must then be allowed.
func (r *renderer) meantByUpdate(ctx context.Context, req instanceRequest, rec *vault.Record, secrets map[string]any, asked []byte) []operation.Change {
	svc, plan, err := findPlan(r.catalog, rec.ServiceID, rec.PlanID)
	if err != nil {
		return nil
	}
	was := req
	was.svc, was.plan, was.params = svc, plan, instanceParams(rec)
	before, err := r.with(ctx, was, secrets)
	if err != nil {
		return nil
	}
	return meant(before, asked)
}

// forBindings renders the instance's manifest as a provision or update
// would, with its live bindings, skip left out and extra added; the
// instance's stored manifest is left alone (binder.deployBinding stores
// what it deploys).
func (r *renderer) forBindings(ctx context.Context, id string, rec *vault.Record, plan catalog.Plan, skip string, extra *catalog.Binding) ([]byte, error) {
	secrets, stored, err := r.secrets.Secret(ctx, credentialsPath(id))
	if err != nil {
		return nil, r.report.internal("could not read the instance's secrets", err, "instance", id)
	}
	if !stored && plan.Manifest.UsesSecrets() {
		r.log.Warn("binding operation refused: the instance has no secrets in Vault for its manifest", "instance", id, "path", credentialsPath(id))
		return nil, secretsNotHeld("the binding's operation was")
	}
	bindings, err := r.bindings.live(ctx, id, plan, skip, extra)
	if err != nil {
		return nil, r.report.internal("could not read the instance's bindings", err, "instance", id)
	}
	manifest, err := renderManifest(plan.Manifest, catalog.ManifestData{
		DeploymentName: rec.Deployment(id), InstanceID: id, ServiceID: rec.ServiceID, PlanID: plan.ID,
		OrganizationGUID: rec.OrganizationGUID, SpaceGUID: rec.SpaceGUID, Params: instanceParams(rec), Secrets: secrets,
		Bindings: bindings,
	}, plan.MergeParameters)
	if err != nil {
		return nil, r.report.internal("the plan's manifest template could not be rendered for the binding", err, "plan", plan.ID)
	}
	return manifest, nil
}

// record renders instance id's manifest from rec (Broker.RenderManifest;
// with standIns, Broker.RenderHeld).
func (r *renderer) record(ctx context.Context, id string, rec *vault.Record, standIns bool) (string, error) {
	svc, plan, ok := r.catalog.Plan(rec.PlanID)
	switch {
	case !ok:
		return "", fmt.Errorf("plan %q of instance %s is not in the catalog", rec.PlanID, id)
	case plan.Manifest == nil:
		return "", fmt.Errorf("plan %q has no manifest template", plan.ID)
	}
	secrets, stored, err := r.secrets.Secret(ctx, credentialsPath(id))
	if err != nil {
		return "", fmt.Errorf("reading the secrets of instance %s: %w", id, err)
	}
	switch {
	case !stored && standIns:
		secrets = operation.StandIns(secretKeys...)
	case !stored && plan.Manifest.UsesSecrets():
		return "", fmt.Errorf("instance %s has no secrets stored for its plan's manifest template", id)
	}
	params := rec.Parameters
	if params == nil {
		params = map[string]any{}
	}
	bindings, err := r.bindings.live(ctx, id, plan, "", nil)
	if err != nil {
		return "", err
	}
	out, err := renderManifest(plan.Manifest, catalog.ManifestData{
		DeploymentName: rec.Deployment(id), InstanceID: id, ServiceID: svc.ID, PlanID: plan.ID,
		OrganizationGUID: rec.OrganizationGUID, SpaceGUID: rec.SpaceGUID, Params: params, Secrets: secrets, Bindings: bindings,
	}, plan.MergeParameters)
	if err != nil {
		return "", fmt.Errorf("rendering the manifest of instance %s: %w", id, err)
	}
	return string(out), nil
}
