package sim

import "net/http"

// visible applies space_guids and organization_guids to a plan or an
// offering of broker b, as CC's BaseServiceListFetcher does for a reader
// who sees everything: without them everything passes; with them, what is
// public passes (a global broker's plans, an offering with such a plan),
// and a space-scoped broker's when its space is among space_guids and its
// org among organization_guids (those given). Plans made visible to orgs
// are not simulated. The caller holds f's read lock.
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

// getVisibility is GET /v3/service_plans/:guid/visibility: a global
// broker's plan is public, a space-scoped broker's visible in its space.
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
	if b.SpaceGUID == "" {
		writeJSON(w, http.StatusOK, object{{"type", "public"}})
		return
	}
	writeJSON(w, http.StatusOK, object{{"type", "space"}, {"space", object{{"guid", sp.GUID}, {"name", sp.Name}}}})
}
