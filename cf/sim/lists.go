package sim

import (
	"net/http"
	"slices"
)

// listBody is a list answer; Included is set only when fields ask for it.
type listBody struct {
	Pagination pagination     `json:"pagination"`
	Resources  []any          `json:"resources"`
	Included   map[string]any `json:"included,omitempty"`
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

func (c *CC) listBrokers(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, brokersKind)
	if !ok {
		return
	}
	c.mu.RLock()
	var hits []Broker
	for _, b := range c.brokers.list {
		if q.matches("guids", b.GUID) && q.matches("names", b.Name) && q.matches("space_guids", b.SpaceGUID) {
			hits = append(hits, b)
		}
	}
	c.mu.RUnlock()
	body, _ := page(c, "/v3/service_brokers", q, hits, func(_ int, b Broker) any { return c.presentBroker(b) })
	writeJSON(w, http.StatusOK, body)
}

func (c *CC) listOfferings(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, offeringsKind)
	if !ok {
		return
	}
	c.mu.RLock()
	var hits []Offering
	for _, o := range c.offerings.list {
		b, _ := c.brokers.get(o.BrokerGUID)
		if q.matches("guids", o.GUID) && q.matches("names", o.Name) && q.matches("broker_catalog_ids", o.CatalogID) &&
			q.matches("service_broker_guids", b.GUID) && q.matches("service_broker_names", b.Name) {
			hits = append(hits, o)
		}
	}
	c.mu.RUnlock()
	body, _ := page(c, "/v3/service_offerings", q, hits, func(_ int, o Offering) any { return c.presentOffering(o) })
	writeJSON(w, http.StatusOK, body)
}

func (c *CC) listPlans(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, plansKind)
	if !ok {
		return
	}
	c.mu.RLock()
	var withInstances map[string]bool // plans of the instances asked for
	if want, ok := q.filters["service_instance_guids"]; ok {
		withInstances = map[string]bool{}
		for _, g := range want {
			if in, ok := c.instances.get(g); ok {
				withInstances[in.PlanGUID] = true
			}
		}
	}
	var hits []Plan
	var spaces []string
	for _, p := range c.plans.list {
		o, _ := c.offerings.get(p.OfferingGUID)
		b, _ := c.brokers.get(o.BrokerGUID)
		if q.matches("guids", p.GUID) && q.matches("names", p.Name) && q.matches("broker_catalog_ids", p.CatalogID) &&
			q.matches("service_broker_guids", b.GUID) && q.matches("service_broker_names", b.Name) &&
			q.matches("service_offering_guids", o.GUID) && q.matches("service_offering_names", o.Name) &&
			(withInstances == nil || withInstances[p.GUID]) {
			hits, spaces = append(hits, p), append(spaces, b.SpaceGUID)
		}
	}
	c.mu.RUnlock()
	body, _ := page(c, "/v3/service_plans", q, hits, func(i int, p Plan) any { return c.presentPlan(p, spaces[i]) })
	writeJSON(w, http.StatusOK, body)
}

func (c *CC) listInstances(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, instancesKind)
	if !ok {
		return
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	var hits []Instance
	for _, in := range c.instances.list {
		sp, _ := c.spaces.get(in.SpaceGUID)
		plan, _ := c.plans.get(in.PlanGUID)
		if q.matches("guids", in.GUID) && q.matches("names", in.Name) && q.matches("space_guids", in.SpaceGUID) &&
			q.matches("organization_guids", sp.OrgGUID) && (!q.hasType || q.typ == in.Type) &&
			c.planMatches(q, in, plan) {
			hits = append(hits, in)
		}
	}
	body, listed := page(c, "/v3/service_instances", q, hits, func(_ int, in Instance) any {
		plan, _ := c.plans.get(in.PlanGUID)
		return c.presentInstance(in, plan)
	})
	body.Included = c.includedLocked(q.fields, listed)
	writeJSON(w, http.StatusOK, body)
}

// planMatches applies the plan filters; a user-provided instance has no
// plan and passes none of them.
func (c *CC) planMatches(q listQuery, in Instance, plan Plan) bool {
	_, byGUID := q.filters["service_plan_guids"]
	_, byName := q.filters["service_plan_names"]
	if in.Type == TypeUserProvided {
		return !byGUID && !byName
	}
	return q.matches("service_plan_guids", in.PlanGUID) && q.matches("service_plan_names", plan.Name)
}

func (c *CC) getInstance(w http.ResponseWriter, r *http.Request) {
	c.mu.RLock()
	in, ok := c.instances.get(r.PathValue("guid"))
	plan, _ := c.plans.get(in.PlanGUID)
	c.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service instance"))
		return
	}
	writeJSON(w, http.StatusOK, c.presentInstance(in, plan))
}

// page is the page q asks for of hits, each presented by present (with its
// index in hits), and the hits it lists.
func page[T any](c *CC, path string, q listQuery, hits []T, present func(i int, t T) any) (listBody, []T) {
	lo, hi, p := c.pageOf(path, q, len(hits))
	body := listBody{Pagination: p, Resources: []any{}}
	for i := lo; i < hi; i++ {
		body.Resources = append(body.Resources, present(i, hits[i]))
	}
	return body, hits[lo:hi]
}
