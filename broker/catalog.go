package broker

import (
	"context"
	"fmt"

	"github.com/pivotal-cf/brokerapi/v11/domain"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Services answers GET /v2/catalog from the catalog directories.
func (b *Broker) Services(context.Context) ([]domain.Service, error) {
	out := make([]domain.Service, 0, len(b.opts.Catalog.Services))
	for _, s := range b.opts.Catalog.Services {
		out = append(out, osbService(s))
	}
	return out, nil
}

// osbService is a catalog service as the OSB catalog shows it. A plan's
// `updatable` says that instances may change to it (see Update); OSB's
// plan_updateable says that an instance of a plan may change to another
// (Cloud Foundry asks it of the instance's current plan before it sends a
// plan change): each plan says so when another plan of its service is
// updatable, and the service when one of its plans does.
func osbService(s catalog.Service) domain.Service {
	svc := domain.Service{
		ID:                   s.ID,
		Name:                 s.Name,
		Description:          s.Description,
		Bindable:             s.Bindable,
		InstancesRetrievable: true,
		BindingsRetrievable:  true,
		// An update that changes only the context (a space or an instance
		// renamed) records it and deploys nothing (Update, keepContext):
		// Cloud Foundry sends such updates only to brokers that say so.
		AllowContextUpdates: true,
		Tags:                s.Tags,
		Plans:               make([]domain.ServicePlan, 0, len(s.Plans)),
	}
	if s.Shareable { // Cloud Foundry lets users share an instance only of a service that says so
		shareable := true
		svc.Metadata = &domain.ServiceMetadata{Shareable: &shareable}
	}
	for _, p := range s.Plans {
		movable := canLeave(s, p.ID)
		svc.PlanUpdatable = svc.PlanUpdatable || movable
		svc.Plans = append(svc.Plans, domain.ServicePlan{
			ID:                     p.ID,
			Name:                   p.Name,
			Description:            p.Description,
			Free:                   domain.FreeValue(true),
			Schemas:                osbSchemas(p.Schemas),
			PlanUpdatable:          domain.PlanUpdatableValue(movable),
			MaintenanceInfo:        osbMaintenance(p.MaintenanceInfo),
			MaximumPollingDuration: pollingDuration(p.MaximumPollingDuration),
		})
	}
	return svc
}

// canLeave says whether an instance of plan planID may change to another
// plan of s: one of the others is updatable.
func canLeave(s catalog.Service, planID string) bool {
	for _, q := range s.Plans {
		if q.ID != planID && q.Updatable {
			return true
		}
	}
	return false
}

// pollingDuration is a plan's maximum_polling_duration as the catalog
// shows it: nil (absent) for 0, the platform's own.
func pollingDuration(seconds int) *int {
	if seconds <= 0 {
		return nil
	}
	return &seconds
}

// findPlan returns cat's plan planID, which must belong to serviceID.
func findPlan(cat *catalog.Catalog, serviceID, planID string) (catalog.Service, catalog.Plan, error) {
	svc, plan, ok := cat.Plan(planID)
	if !ok {
		return svc, plan, badRequest("plan %q is not in the catalog", planID)
	}
	if serviceID != "" && svc.ID != serviceID {
		return svc, plan, badRequest("plan %q does not belong to service %q", planID, serviceID)
	}
	return svc, plan, nil
}

// osbMaintenance is a plan's maintenance_info as the OSB catalog shows it;
// nil when the plan declares none.
func osbMaintenance(mi *catalog.MaintenanceInfo) *domain.MaintenanceInfo {
	if mi == nil {
		return nil
	}
	return &domain.MaintenanceInfo{Version: mi.Version, Description: mi.Description}
}

// maintenanceVersion is the version a request's maintenance_info names; ""
// when it names none (absent, or an object without a version: platforms
// MAY send it, and conformance checkers send {}).
func maintenanceVersion(mi *domain.MaintenanceInfo) string {
	if mi == nil {
		return ""
	}
	return mi.Version
}

// checkMaintenance refuses a request whose maintenance_info version is not
// the plan's (422 MaintenanceInfoConflict naming both): the platform's
// catalog is out of date, or the plan declares none.
func checkMaintenance(requested string, plan catalog.Plan) error {
	switch {
	case requested == "":
		return nil
	case plan.MaintenanceInfo == nil:
		return maintenanceConflict(fmt.Errorf("maintenance_info version %s was sent, but plan %s declares no maintenance_info; fetch the catalog again",
			requested, plan.ID))
	case requested != plan.MaintenanceInfo.Version:
		return maintenanceConflict(fmt.Errorf("maintenance_info version %s is not plan %s's version %s; fetch the catalog again",
			requested, plan.ID, plan.MaintenanceInfo.Version))
	}
	return nil
}

// planVersion is the maintenance_info version of the plan; "" when none.
func planVersion(plan catalog.Plan) string {
	if plan.MaintenanceInfo == nil {
		return ""
	}
	return plan.MaintenanceInfo.Version
}

// versionLabel is the instance's metadata label (OSB 2.16's
// metadata.labels of a provision, update and fetch answer) that holds the
// plan's maintenance_info version the instance runs, or is being deployed
// with.
const versionLabel = "maintenance_info_version"

// versionLabels are the metadata of an answer about an instance at
// version: none without one.
func versionLabels(version string) domain.InstanceMetadata {
	if version == "" {
		return domain.InstanceMetadata{}
	}
	return domain.InstanceMetadata{Labels: map[string]any{versionLabel: version}}
}

// judgeIDs refuses a request on an existing instance whose service_id is not
// the instance's service, or whose plan_id (when given) is neither the
// instance's plan nor a plan of its service in the catalog: 400 naming the
// field. Update, bind, deprovision and unbind judge them alike (provision
// against the catalog, findPlan).
func judgeIDs(rec *vault.Record, cat *catalog.Catalog, serviceID, planID string) error {
	if serviceID != rec.ServiceID {
		return badRequest("service_id %q is not this instance's service (%q)", serviceID, rec.ServiceID)
	}
	if planID == "" || planID == rec.PlanID {
		return nil
	}
	if svc, _, ok := cat.Plan(planID); !ok || svc.ID != rec.ServiceID {
		return badRequest("plan_id %q is not a plan of this instance's service %q", planID, rec.ServiceID)
	}
	return nil
}

// osbSchemas is a plan's parameter schemas as the OSB catalog shows them;
// nil when the plan declares none.
func osbSchemas(s catalog.Schemas) *domain.ServiceSchemas {
	if s.InstanceCreate == nil && s.InstanceUpdate == nil && s.BindingCreate == nil {
		return nil
	}
	doc := func(s *catalog.Schema) domain.Schema {
		if s == nil {
			return domain.Schema{}
		}
		return domain.Schema{Parameters: s.Document()}
	}
	return &domain.ServiceSchemas{
		Instance: domain.ServiceInstanceSchema{Create: doc(s.InstanceCreate), Update: doc(s.InstanceUpdate)},
		Binding:  domain.ServiceBindingSchema{Create: doc(s.BindingCreate)},
	}
}
