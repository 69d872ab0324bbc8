package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/pivotal-cf/brokerapi/v11/domain/apiresponses"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// bindingsListPath is where the ids of an instance's bindings are listed
// (so that a deprovision can delete their credentials), relative to the mount.
func bindingsListPath(id string) string { return id + "/binding-ids" }

// Bind answers PUT /v2/service_instances/:id/service_bindings/:bid. The
// credentials are the plan's credentials template rendered with the
// deployment's VM addresses and the instance's secrets; they are stored in
// Vault at {id}/bindings/{bid}. An identical repeat gets 200 with the same
// credentials, a different one 409.
//
// A per_binding plan's bind is asynchronous (binder.perBinding): without
// accepts_incomplete it is 422 AsyncRequired.
func (b *Broker) Bind(ctx context.Context, id, bid string, d domain.BindDetails, async bool) (domain.Binding, error) {
	ctx, unlock, err := b.locks.existing(ctx, id, apiresponses.ErrInstanceDoesNotExist)
	if err != nil {
		return domain.Binding{}, err
	}
	defer unlock()
	rec, err := b.bind.bindable(ctx, id)
	if err != nil {
		return domain.Binding{}, err
	}
	if err := judgeIDs(rec, b.opts.Catalog, d.ServiceID, d.PlanID); err != nil {
		return domain.Binding{}, err
	}
	params, err := parseParams(d.RawParameters)
	if err != nil {
		return domain.Binding{}, err
	}
	_, plan, _ := b.opts.Catalog.Plan(rec.PlanID) // bindable checked that it exists
	if err := plan.CheckParameters(catalog.Bind, params, nil); err != nil {
		return domain.Binding{}, badRequest("%v", err)
	}
	appGUID := appGUIDOf(d)
	if pred := predecessorOf(ctx); pred != "" {
		if err := b.rotate.checkPredecessor(ctx, id, bid, pred, plan); err != nil {
			return domain.Binding{}, err
		}
	}
	if plan.PerBinding() {
		if !async {
			return domain.Binding{}, apiresponses.ErrAsyncRequired
		}
		return b.bind.perBinding(ctx, id, bid, rec, plan, appGUID, params)
	}
	stored, ok, err := b.opts.Store.Secret(ctx, bindingPath(id, bid))
	if err != nil {
		return domain.Binding{}, b.report.internal("could not read the binding", err, "instance", id, "binding", bid)
	}
	if ok {
		return repeatBind(stored, appGUID, params)
	}
	if err := b.bindings.underMax(ctx, id, plan); err != nil {
		return domain.Binding{}, err
	}
	creds, err := b.bind.credentials(ctx, id, catalog.Binding{ID: bid, Secrets: map[string]any{}}, appGUID, rec, params)
	if err != nil {
		return domain.Binding{}, err
	}
	err = b.bindings.store(ctx, id, bid, map[string]any{
		"credentials": creds, "app_guid": appGUID, "parameters": params,
		"created": time.Now().UTC().Format(time.RFC3339),
	})
	if errors.Is(err, vault.ErrConflict) { // another broker stored this binding first: its answer is the binding
		if stored, ok, rerr := b.opts.Store.Secret(ctx, bindingPath(id, bid)); rerr == nil && ok {
			return repeatBind(stored, appGUID, params)
		}
	}
	if err != nil {
		return domain.Binding{}, b.report.internal("could not store the binding", err, "instance", id, "binding", bid)
	}
	b.log.Info("bound", "instance", id, "binding", bid)
	b.history.bindingEvent(ctx, id, eventBind, rec.Deployment(id), bid)
	return domain.Binding{Credentials: creds}, nil
}

// appGUIDOf is the app a binding is for: app_guid, or bind_resource.app_guid.
func appGUIDOf(d domain.BindDetails) string {
	if d.AppGUID == "" && d.BindResource != nil {
		return d.BindResource.AppGuid
	}
	return d.AppGUID
}

// binder binds and unbinds: the credentials of a binding, and a
// per_binding plan's bind and unbind, which deploy the binding's own user.
type binder struct {
	catalog  *catalog.Catalog
	store    Store
	records  records
	dirs     *directors
	bindings *bindingStore
	render   *renderer
	deploy   *deployer
	ops      *bindingSettler
	history  *history
	metrics  *Metrics
	timeout  time.Duration // Options.DirectorTimeout
	report   reporter
	log      *slog.Logger
}

// bindable returns the record of an instance that can be bound now.
func (bd *binder) bindable(ctx context.Context, id string) (*vault.Record, error) {
	rec, err := bd.records.read(ctx, id, apiresponses.ErrInstanceDoesNotExist)
	if err != nil {
		return nil, err
	}
	if rec.Adopted {
		return nil, errAwaitsAdoption
	}
	if rec.Retiring != nil {
		return nil, errRetiring
	}
	svc, _, ok := bd.catalog.Plan(rec.PlanID)
	if !ok {
		return nil, badRequest("the instance's plan %q is no longer in the catalog", rec.PlanID)
	}
	if !svc.Bindable {
		return nil, errNotBindable
	}
	if op := rec.LastOperation; op != nil && op.Type == opTypeProvision && op.State != stateSucceeded {
		if op.State == stateInProgress {
			return nil, concurrency("the provision")
		}
		return nil, failure(errors.New("the instance's provision failed; it cannot be bound"), http.StatusUnprocessableEntity, "ProvisionFailed")
	}
	if op := rec.LastOperation; op != nil && op.Type == opTypeDeprovision && op.State == stateInProgress {
		return nil, concurrency("a deprovision")
	}
	return rec, nil
}

// repeatBind answers a bind whose binding exists: 200 with its credentials
// when the request is the same, else 409.
func repeatBind(stored map[string]any, appGUID string, params map[string]any) (domain.Binding, error) {
	prev, _ := stored["parameters"].(map[string]any)
	if stored["app_guid"] != appGUID || !sameParams(prev, params) {
		return domain.Binding{}, errBindingConflict
	}
	return domain.Binding{AlreadyExists: true, Credentials: stored["credentials"]}, nil
}

// credentials renders the plan's credentials template for a new binding
// (its id, and its own secrets for a per_binding plan).
func (bd *binder) credentials(ctx context.Context, id string, binding catalog.Binding, appGUID string, rec *vault.Record, params map[string]any) (map[string]any, error) {
	bid := binding.ID
	_, plan, _ := bd.catalog.Plan(rec.PlanID)
	ips, err := bd.deploymentIPs(ctx, id, rec)
	if err != nil {
		return nil, err
	}
	secrets, ok, err := bd.store.Secret(ctx, credentialsPath(id))
	if err != nil {
		return nil, bd.report.internal("could not read the instance's secrets", err, "instance", id)
	}
	if !ok && plan.Credentials != nil && plan.Credentials.UsesSecrets() {
		bd.log.Warn("bind refused: the instance has no secrets in Vault for its credentials", "instance", id, "path", credentialsPath(id))
		return nil, secretsNotHeld("bind")
	}
	data := catalog.CredentialsData{
		ManifestData: catalog.ManifestData{
			DeploymentName: rec.Deployment(id), InstanceID: id, ServiceID: rec.ServiceID, PlanID: rec.PlanID,
			OrganizationGUID: rec.OrganizationGUID, SpaceGUID: rec.SpaceGUID, Params: instanceParams(rec), Secrets: secrets,
			Bindings: []catalog.Binding{},
		},
		BindParams: params, IPs: ips, BindingID: bid, AppGUID: appGUID, Binding: binding,
	}
	if len(ips) > 0 {
		data.Host = ips[0]
	}
	creds, err := renderCredentials(plan.Credentials, data)
	if err != nil {
		return nil, bd.report.renderFailed("credentials", plan.ID, params, err)
	}
	return creds, nil
}

// deploymentIPs lists the addresses of the instance's VMs: 422 when its
// deployment does not exist.
func (bd *binder) deploymentIPs(ctx context.Context, id string, rec *vault.Record) ([]string, error) {
	dir, err := bd.dirs.of(rec)
	if err != nil {
		return nil, bd.report.internal("the instance's Director is not configured", err, "instance", id)
	}
	var vms []bosh.VM
	err = bd.dirs.ask(ctx, dir, "vms", func(ctx context.Context) error {
		var err error
		vms, err = dir.Reader.VMs(ctx, rec.Deployment(id))
		return err
	})
	var de *directorError
	switch {
	case errors.Is(err, bosh.ErrDeploymentNotFound):
		return nil, failure(errors.New("the instance's deployment does not exist"), http.StatusUnprocessableEntity, "DeploymentMissing")
	case errors.As(err, &de): // not the broker's fault: the platform may try again
		bd.log.Error("could not list the deployment's VMs for a binding", "instance", id, "error", err)
		return nil, failure(fmt.Errorf("the BOSH Director %q is failing (%d attempts); try the binding again later", de.director, de.attempts),
			http.StatusServiceUnavailable, "DirectorUnavailable")
	case err != nil:
		return nil, bd.report.internal("could not list the deployment's VMs", err, "instance", id)
	}
	return vmIPs(vms), nil
}

// vmIPs lists the VMs' addresses in the Director's order.
func vmIPs(vms []bosh.VM) []string {
	ips := []string{}
	for _, vm := range vms {
		ips = append(ips, vm.IPs...)
	}
	return ips
}

// instanceParams are the parameters recorded for an instance, never nil.
func instanceParams(rec *vault.Record) map[string]any {
	if rec.Parameters == nil {
		return map[string]any{}
	}
	return rec.Parameters
}
