package sim

import (
	"net/http"
	"slices"
)

// listBody is a list answer; Included is set only when fields ask for it.
type listBody struct {
	Pagination pagination `json:"pagination"`
	Resources  []any      `json:"resources"`
	Included   object     `json:"included,omitempty"`
}

// matches says whether value passes the filter key of q (absent = any).
func (q listQuery) matches(key string, values ...string) bool {
	want, ok := q.filters[key]
	if !ok {
		return true
	}
	for _, v := range values {
		if slices.Contains(want, v) {
			return true
		}
	}
	return false
}

// parse answers 400 for a refused query.
func parse(w http.ResponseWriter, r *http.Request, k listKind) (listQuery, bool) {
	q, detail, ok := k.parseList(r.URL.RawQuery)
	if !ok {
		writeError(w, http.StatusBadRequest, badQuery(detail))
	}
	return q, ok
}

func (a *api) listBrokers(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, brokersKind)
	if !ok {
		return
	}
	a.f.mu.RLock()
	var hits []Broker
	for _, b := range a.f.brokers.list {
		if q.matches("guids", b.GUID) && q.matches("names", b.Name) && q.matches("space_guids", b.SpaceGUID) {
			hits = append(hits, b)
		}
	}
	a.f.mu.RUnlock()
	body, _ := page(a, "/v3/service_brokers", q, hits, func(_ int, b Broker) any { return a.presentBroker(b) })
	writeJSON(w, http.StatusOK, body)
}

func (a *api) listOfferings(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, offeringsKind)
	if !ok {
		return
	}
	a.f.mu.RLock()
	defer a.f.mu.RUnlock()
	withPlans := map[string]bool{} // offerings with a plan
	for _, p := range a.f.plans.list {
		withPlans[p.OfferingGUID] = true
	}
	var hits []Offering
	for _, o := range a.f.offerings.list {
		b, _ := a.f.brokers.get(o.BrokerGUID)
		if q.matches("guids", o.GUID) && q.matches("names", o.Name) && q.matches("broker_catalog_ids", o.CatalogID) &&
			q.matches("service_broker_guids", b.GUID) && q.matches("service_broker_names", b.Name) &&
			q.matches("available", "true") && visible(a.f, q, b, b.SpaceGUID == "" && withPlans[o.GUID]) {
			hits = append(hits, o)
		}
	}
	body, listed := page(a, "/v3/service_offerings", q, hits, func(_ int, o Offering) any { return a.presentOffering(o) })
	body.Included = decorators{a}.offerings(q.fields, listed)
	writeJSON(w, http.StatusOK, body)
}

func (a *api) listPlans(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, plansKind)
	if !ok {
		return
	}
	a.f.mu.RLock()
	defer a.f.mu.RUnlock()
	var withInstances map[string]bool // plans of the instances asked for
	if want, ok := q.filters["service_instance_guids"]; ok {
		withInstances = map[string]bool{}
		for _, g := range want {
			if in, ok := a.f.instances.get(g); ok {
				withInstances[in.PlanGUID] = true
			}
		}
	}
	var hits []Plan
	var spaces []string
	for _, p := range a.f.plans.list {
		o, _ := a.f.offerings.get(p.OfferingGUID)
		b, _ := a.f.brokers.get(o.BrokerGUID)
		if q.matches("guids", p.GUID) && q.matches("names", p.Name) && q.matches("broker_catalog_ids", p.CatalogID) &&
			q.matches("service_broker_guids", b.GUID) && q.matches("service_broker_names", b.Name) &&
			q.matches("service_offering_guids", o.GUID) && q.matches("service_offering_names", o.Name) &&
			(withInstances == nil || withInstances[p.GUID]) && q.matches("available", "true") &&
			visible(a.f, q, b, b.SpaceGUID == "") {
			hits, spaces = append(hits, p), append(spaces, b.SpaceGUID)
		}
	}
	body, listed := page(a, "/v3/service_plans", q, hits, func(i int, p Plan) any { return a.presentPlan(p, spaces[i]) })
	if len(q.filters["include"]) > 0 || len(q.fields) > 0 {
		body.Included = decorators{a}.plans(q, listed)
	}
	writeJSON(w, http.StatusOK, body)
}

func (a *api) listInstances(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, instancesKind)
	if !ok {
		return
	}
	order, ok := orderBy(w, q)
	if !ok {
		return
	}
	a.f.mu.RLock()
	defer a.f.mu.RUnlock()
	var hits []Instance
	for _, in := range a.f.instances.list {
		sp, _ := a.f.spaces.get(in.SpaceGUID)
		plan, _ := a.f.plans.get(in.PlanGUID)
		if q.matches("guids", in.GUID) && q.matches("names", in.Name) && q.matches("space_guids", in.SpaceGUID) &&
			q.matches("organization_guids", sp.OrgGUID) && (!q.hasType || q.typ == in.Type) &&
			a.planMatches(q, in, plan) {
			hits = append(hits, in)
		}
	}
	sortBy(hits, order, func(in Instance) sortKey { return sortKey{in.Name, in.CreatedAt, in.UpdatedAt, in.GUID} })
	body, listed := page(a, "/v3/service_instances", q, hits, func(_ int, in Instance) any {
		plan, _ := a.f.plans.get(in.PlanGUID)
		return a.presentInstance(in, plan)
	})
	if len(q.fields) > 0 {
		body.Included = decorators{a}.instances(q.fields, listed)
	}
	writeJSON(w, http.StatusOK, body)
}

// planMatches applies the plan filters; a user-provided instance has no
// plan and passes none of them.
func (a *api) planMatches(q listQuery, in Instance, plan Plan) bool {
	_, byGUID := q.filters["service_plan_guids"]
	_, byName := q.filters["service_plan_names"]
	if in.Type == TypeUserProvided {
		return !byGUID && !byName
	}
	return q.matches("service_plan_guids", in.PlanGUID) && q.matches("service_plan_names", plan.Name)
}

func (a *api) getInstance(w http.ResponseWriter, r *http.Request) {
	a.f.mu.RLock()
	in, ok := a.f.instances.get(r.PathValue("guid"))
	plan, _ := a.f.plans.get(in.PlanGUID)
	a.f.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service instance"))
		return
	}
	writeJSON(w, http.StatusOK, a.presentInstance(in, plan))
}

// page is the page q asks for of hits, each presented by present (with its
// index in hits), and the hits it lists.
func page[T any](a *api, path string, q listQuery, hits []T, present func(i int, t T) any) (listBody, []T) {
	lo, hi, p := a.pageOf(path, q, len(hits))
	body := listBody{Pagination: p, Resources: []any{}}
	for i := lo; i < hi; i++ {
		body.Resources = append(body.Resources, present(i, hits[i]))
	}
	return body, hits[lo:hi]
}
