package sim

import (
	"net/http"
	"slices"
	"sync"
)

// Plan visibility types, as CC's ServicePlanVisibilityTypes names them.
const (
	visPublic = "public"
	visAdmin  = "admin"
	visOrg    = "organization"
	visSpace  = "space"
)

// planAccess is the visibility set on plans through PATCH and POST
// /v3/service_plans/:guid/visibility; its zero value is ready, and its own
// lock is taken after (never around) the foundation's. A plan with none set
// is public (a global broker's) or space (a space-scoped broker's): the
// simulator starts a global broker's plans public, as if `cf
// enable-service-access` had been run, where CC starts them admin
// (ServicePlan's public column defaults to false; visibility_type,
// app/models/services/service_plan.rb:188-196).
type planAccess struct {
	mu     sync.Mutex
	byPlan map[string]access
}

// access is one plan's visibility: public, or visible to orgs (none: admin only).
type access struct {
	public bool
	orgs   []string // org guids, in the order they were made visible
}

// get is the visibility set on plan, ok false when none was.
func (pa *planAccess) get(plan string) (access, bool) {
	pa.mu.Lock()
	defer pa.mu.Unlock()
	a, ok := pa.byPlan[plan]
	return access{public: a.public, orgs: slices.Clone(a.orgs)}, ok
}

// set replaces plan's visibility.
func (pa *planAccess) set(plan string, a access) {
	pa.mu.Lock()
	defer pa.mu.Unlock()
	if pa.byPlan == nil {
		pa.byPlan = map[string]access{}
	}
	pa.byPlan[plan] = a
}

// visibilityType is the plan's visibility_type, as ServicePlan#visibility_type
// (service_plan.rb:188-196): public, space, organization (some orgs), admin.
func visibilityType(f *Foundation, planGUID, brokerSpace string) string {
	a, set := f.access.get(planGUID)
	switch {
	case !set && brokerSpace == "", set && a.public:
		return visPublic
	case brokerSpace != "":
		return visSpace
	case len(a.orgs) > 0:
		return visOrg
	}
	return visAdmin
}

// visible applies space_guids and organization_guids to a plan or an
// offering of broker b, as CC's BaseServiceListFetcher does for a reader
// who sees everything: without them everything passes; with them, what is
// public passes (a global broker's plans, an offering with such a plan),
// and a space-scoped broker's when its space is among space_guids and its
// org among organization_guids (those given). The listings do not read
// the visibilities set on plans (admin, organization): a global broker's
// plans pass as public. The caller holds f's read lock.
func visible(f *Foundation, q listQuery, b Broker, public bool) bool {
	_, bySpace := q.filters["space_guids"]
	_, byOrg := q.filters["organization_guids"]
	if (!bySpace && !byOrg) || public {
		return true
	}
	if b.SpaceGUID == "" {
		return false
	}
	sp, _ := f.spaces.get(b.SpaceGUID)
	return q.matches("space_guids", sp.GUID) && q.matches("organization_guids", sp.OrgGUID)
}

// getVisibility is GET /v3/service_plans/:guid/visibility, as
// ServicePlanVisibilityPresenter writes it: the type, a space-scoped
// broker's space, an org-restricted plan's orgs with their names.
func (a *api) getVisibility(w http.ResponseWriter, r *http.Request) {
	a.f.mu.RLock()
	p, ok := a.f.plans.get(r.PathValue("guid"))
	o, _ := a.f.offerings.get(p.OfferingGUID)
	b, _ := a.f.brokers.get(o.BrokerGUID)
	sp, _ := a.f.spaces.get(b.SpaceGUID)
	a.f.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service plan"))
		return
	}
	writeJSON(w, http.StatusOK, presentVisibility(a.f, p.GUID, sp, true))
}

// presentVisibility is a plan's visibility object; orgs false leaves an
// org-restricted plan's organizations out (the answer to POST, whose
// presenter is given none: service_plan_visibility_controller.rb:33-37).
func presentVisibility(f *Foundation, planGUID string, sp Space, orgs bool) object {
	t := visibilityType(f, planGUID, sp.GUID)
	out := object{{"type", t}}
	switch {
	case t == visSpace:
		out = append(out, member{"space", object{{"guid", sp.GUID}, {"name", sp.Name}}})
	case t == visOrg && orgs:
		a, _ := f.access.get(planGUID)
		list := []object{}
		f.mu.RLock()
		for _, guid := range a.orgs {
			org, _ := f.orgs.get(guid)
			list = append(list, object{{"guid", org.GUID}, {"name", org.Name}})
		}
		f.mu.RUnlock()
		out = append(out, member{"organizations", list})
	}
	return out
}
