package sim

import (
	"net/http"
	"slices"
	"time"
)

// bindingsKind is GET /v3/service_credential_bindings as CC's
// ServiceCredentialBindingListMessage takes it: service keys and app
// bindings; the app filters hold of app bindings only.
var bindingsKind = listKind{
	allowed: append(slices.Clip(listBase), "names", "service_instance_guids", "service_instance_names", "service_plan_names",
		"service_plan_guids", "service_offering_names", "service_offering_guids", "app_guids", "app_names", "include", "type",
		"label_selector"),
	simulated: []string{"guids", "names", "service_instance_guids", "service_instance_names", "service_plan_names",
		"service_plan_guids", "service_offering_names", "service_offering_guids", "app_guids", "app_names", "include", "type",
		"order_by"},
	includes: []string{"app", "service_instance"},
}

// listBindings answers the list of service credential bindings (keys and
// app bindings), as `cf services`, `cf service-keys` and `cf
// unbind-service` ask; include=app adds the bindings' apps,
// include=service_instance their instances.
func (a *api) listBindings(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, bindingsKind)
	if !ok {
		return
	}
	if q.hasType && q.typ != "app" && q.typ != "key" {
		writeError(w, http.StatusBadRequest, badQuery("Type must be one of 'app', 'key'"))
		return
	}
	order, ok := orderBy(w, q)
	if !ok {
		return
	}
	a.f.mu.RLock()
	defer a.f.mu.RUnlock()
	hits := keyHits(a.f, q)
	sortBy(hits, order, func(k Key) sortKey { return sortKey{k.Name, k.CreatedAt, k.UpdatedAt, k.GUID} })
	body, listed := page(a, "/v3/service_credential_bindings", q, hits, func(_ int, k Key) any { return presentKey(a.url, k) })
	for _, inc := range q.filters["include"] {
		if inc == "app" {
			body.Included = append(body.Included, member{key: "apps", value: bindingApps(a, listed)})
			continue
		}
		body.Included = append(body.Included, member{key: "service_instances", value: keyInstances(a, listed)})
	}
	writeJSON(w, http.StatusOK, body)
}

// keyHits are the bindings q's filters hold of; the caller holds f.mu.
func keyHits(f *Foundation, q listQuery) []Key {
	_, byApp := q.filters["app_guids"]
	_, byAppName := q.filters["app_names"]
	var hits []Key
	for _, k := range f.keys.list {
		typ := "key"
		if k.AppGUID != "" {
			typ = "app"
		}
		app, _ := f.apps.get(k.AppGUID)
		if (q.hasType && q.typ != typ) || ((byApp || byAppName) && k.AppGUID == "") ||
			!q.matches("app_guids", k.AppGUID) || !q.matches("app_names", app.Name) {
			continue
		}
		in, _ := f.instances.get(k.InstanceGUID)
		p, _ := f.plans.get(in.PlanGUID)
		o, _ := f.offerings.get(p.OfferingGUID)
		if q.matches("guids", k.GUID) && q.matches("names", k.Name) && q.matches("service_instance_guids", in.GUID) &&
			q.matches("service_instance_names", in.Name) && q.matches("service_plan_guids", p.GUID) &&
			q.matches("service_plan_names", p.Name) && q.matches("service_offering_guids", o.GUID) &&
			q.matches("service_offering_names", o.Name) {
			hits = append(hits, k)
		}
	}
	return hits
}

// bindingApps are the listed bindings' apps, each once; the caller holds a.f.mu.
func bindingApps(a *api, listed []Key) []any {
	out := []any{}
	seen := map[string]bool{}
	for _, k := range listed {
		app, ok := a.f.apps.get(k.AppGUID)
		if !ok || seen[app.GUID] {
			continue
		}
		seen[app.GUID] = true
		out = append(out, presentApp(a.url, app))
	}
	return out
}

// keyInstances are the listed keys' instances, each once; the caller holds a.f.mu.
func keyInstances(a *api, listed []Key) []any {
	out := []any{}
	seen := map[string]bool{}
	for _, k := range listed {
		in, ok := a.f.instances.get(k.InstanceGUID)
		if !ok || seen[in.GUID] {
			continue
		}
		seen[in.GUID] = true
		p, _ := a.f.plans.get(in.PlanGUID)
		out = append(out, a.presentInstance(in, p))
	}
	return out
}

// featureFlags are the Cloud Controller's feature flags and their defaults
// (FeatureFlag::DEFAULT_FLAGS); the simulator changes none, but for
// hide_marketplace_from_unauthenticated_users, which Options.HideMarketplace
// sets.
var featureFlags = map[string]bool{
	"user_org_creation": false, "private_domain_creation": true, "app_bits_upload": true, "app_scaling": true,
	"route_creation": true, "service_instance_creation": true, "diego_docker": false, "diego_cnb": false,
	"set_roles_by_username": true, "unset_roles_by_username": true, "task_creation": true, "env_var_visibility": true,
	"space_scoped_private_broker_creation": true, "space_developer_env_var_visibility": true,
	"service_instance_sharing": false, "hide_marketplace_from_unauthenticated_users": false, "resource_matching": true,
	"route_sharing": false, "hash_based_routing": false,
}

type featureFlagJSON struct {
	Name               string          `json:"name"`
	Enabled            bool            `json:"enabled"`
	UpdatedAt          *time.Time      `json:"updated_at"`
	CustomErrorMessage *string         `json:"custom_error_message"`
	Links              map[string]href `json:"links"`
}

// getFeatureFlag answers GET /v3/feature_flags/:name (`cf service NAME`
// reads service_instance_sharing): a default flag was never updated, so its
// updated_at and custom_error_message are null.
func (a *api) getFeatureFlag(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	enabled, ok := featureFlags[name]
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Feature flag"))
		return
	}
	if name == "hide_marketplace_from_unauthenticated_users" {
		enabled = a.hideMarketplace
	}
	writeJSON(w, http.StatusOK, featureFlagJSON{Name: name, Enabled: enabled,
		Links: map[string]href{"self": {a.url + "/v3/feature_flags/" + name}}})
}

// getOffering answers GET /v3/service_offerings/:guid (`cf service NAME`
// reads its instance's offering); 404 "Service offering not found".
func (a *api) getOffering(w http.ResponseWriter, r *http.Request) {
	a.f.mu.RLock()
	o, ok := a.f.offerings.get(r.PathValue("guid"))
	a.f.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service offering"))
		return
	}
	writeJSON(w, http.StatusOK, a.presentOffering(o))
}

// getPlan answers GET /v3/service_plans/:guid; 404 "Service plan not found".
func (a *api) getPlan(w http.ResponseWriter, r *http.Request) {
	a.f.mu.RLock()
	p, ok := a.f.plans.get(r.PathValue("guid"))
	o, _ := a.f.offerings.get(p.OfferingGUID)
	b, _ := a.f.brokers.get(o.BrokerGUID)
	a.f.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service plan"))
		return
	}
	writeJSON(w, http.StatusOK, a.presentPlan(p, b.SpaceGUID))
}

// sharedSpaces answers GET /v3/service_instances/:guid/relationships/shared_spaces
// (`cf service NAME`): the simulator shares no instance, so its data is
// empty; fields[space] and fields[space.organization] add empty
// included.spaces and organizations. 404 for an unknown instance.
func (a *api) sharedSpaces(w http.ResponseWriter, r *http.Request) {
	guid := r.PathValue("guid")
	a.f.mu.RLock()
	_, ok := a.f.instances.get(guid)
	a.f.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Service instance"))
		return
	}
	body := object{{key: "data", value: []any{}},
		{key: "links", value: map[string]href{"self": {a.url + "/v3/service_instances/" + guid + "/relationships/shared_spaces"}}}}
	var included object
	for _, res := range []struct{ field, key string }{{"fields[space]", "spaces"}, {"fields[space.organization]", "organizations"}} {
		if r.URL.Query().Has(res.field) {
			included = append(included, member{key: res.key, value: []any{}})
		}
	}
	if included != nil {
		body = append(body, member{key: "included", value: included})
	}
	writeJSON(w, http.StatusOK, body)
}
