package broker

import (
	"context"

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
// per-plan plan_updateable means the opposite direction, so only the
// service's plan_updateable is set: true when one of its plans is updatable.
func osbService(s catalog.Service) domain.Service {
	svc := domain.Service{
		ID:                   s.ID,
		Name:                 s.Name,
		Description:          s.Description,
		Bindable:             s.Bindable,
		InstancesRetrievable: true,
		BindingsRetrievable:  true,
		Tags:                 s.Tags,
		Plans:                make([]domain.ServicePlan, 0, len(s.Plans)),
	}
	for _, p := range s.Plans {
		svc.PlanUpdatable = svc.PlanUpdatable || p.Updatable
		svc.Plans = append(svc.Plans, domain.ServicePlan{
			ID:          p.ID,
			Name:        p.Name,
			Description: p.Description,
			Free:        domain.FreeValue(true),
			Schemas:     osbSchemas(p.Schemas),
		})
	}
	return svc
}

// findPlan returns the catalog's plan planID, which must belong to serviceID.
func (b *Broker) findPlan(serviceID, planID string) (catalog.Service, catalog.Plan, error) {
	svc, plan, ok := b.opts.Catalog.Plan(planID)
	if !ok {
		return svc, plan, badRequest("plan %q is not in the catalog", planID)
	}
	if serviceID != "" && svc.ID != serviceID {
		return svc, plan, badRequest("plan %q does not belong to service %q", planID, serviceID)
	}
	return svc, plan, nil
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
