package sim

import (
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"
)

// App is an application, as far as a binding needs one: a name in a
// space. The simulator stages and runs nothing: every app is STOPPED,
// without a droplet.
type App struct {
	GUID, Name, SpaceGUID string
	CreatedAt, UpdatedAt  time.Time
}

// appRoutes answers POST, GET and the list of /v3/apps (minimal: see
// README "Not simulated").
type appRoutes struct {
	f   *Foundation
	api *api
}

// appsKind is GET /v3/apps as AppsListMessage takes it.
var appsKind = listKind{
	allowed: append(slices.Clip(listBase), "names", "organization_guids", "space_guids", "stacks", "include", "lifecycle_type",
		"label_selector"),
	simulated: []string{"guids", "names", "organization_guids", "space_guids", "order_by"},
}

// appDefaultStack is the lifecycle's stack of an app created without one
// (CC's default_stack in a current cf-deployment).
const appDefaultStack = "cflinuxfs4"

type appJSON struct {
	GUID          string          `json:"guid"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
	Name          string          `json:"name"`
	State         string          `json:"state"`
	Lifecycle     appLifecycle    `json:"lifecycle"`
	Relationships map[string]any  `json:"relationships"`
	Metadata      metadata        `json:"metadata"`
	Links         map[string]link `json:"links"`
}

type appLifecycle struct {
	Type string `json:"type"`
	Data struct {
		Buildpacks []string `json:"buildpacks"`
		Stack      string   `json:"stack"`
	} `json:"data"`
}

// link is a link, with its method for an action.
type link struct {
	Href   string `json:"href"`
	Method string `json:"method,omitempty"`
}

// presentApp writes an app as AppPresenter does.
func presentApp(url string, a App) appJSON {
	self := url + "/v3/apps/" + a.GUID
	lc := appLifecycle{Type: "buildpack"}
	lc.Data.Buildpacks, lc.Data.Stack = []string{}, appDefaultStack
	links := map[string]link{"self": {Href: self}, "environment_variables": {Href: self + "/environment_variables"},
		"space": {Href: url + "/v3/spaces/" + a.SpaceGUID}, "processes": {Href: self + "/processes"},
		"packages": {Href: self + "/packages"}, "current_droplet": {Href: self + "/droplets/current"},
		"droplets": {Href: self + "/droplets"}, "tasks": {Href: self + "/tasks"},
		"start": {self + "/actions/start", "POST"}, "stop": {self + "/actions/stop", "POST"},
		"clear_buildpack_cache": {self + "/actions/clear_buildpack_cache", "POST"}, "revisions": {Href: self + "/revisions"},
		"deployed_revisions": {Href: self + "/revisions/deployed"}, "features": {Href: self + "/features"}}
	return appJSON{GUID: a.GUID, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, Name: a.Name, State: "STOPPED", Lifecycle: lc,
		Relationships: map[string]any{"space": relation{guidRef{a.SpaceGUID}}, "current_droplet": nullGUID{}},
		Metadata:      emptyMetadata(), Links: links}
}

// nullGUID is a to-one relationship whose target is unset: {"data": {"guid": null}}.
type nullGUID struct {
	Data struct {
		GUID *string `json:"guid"`
	} `json:"data"`
}

// create is POST /v3/apps: {name, relationships.space}, checked as
// AppCreateMessage and AppModel check it.
func (ar *appRoutes) create(w http.ResponseWriter, r *http.Request) {
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	var problems, unknown []string
	for k := range body {
		if !slices.Contains([]string{"name", "environment_variables", "relationships", "lifecycle", "metadata"}, k) {
			unknown = append(unknown, "'"+k+"'")
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		problems = append(problems, "Unknown field(s): "+strings.Join(unknown, ", "))
	}
	name, isString := body["name"].(string)
	switch {
	case !isString:
		problems = append(problems, "Name must be a string")
	case len(name) > 255:
		problems = append(problems, "Name is too long (maximum is 255 characters)")
	}
	rel, _ := body["relationships"].(map[string]any)
	sp, _ := rel["space"].(map[string]any)
	data, _ := sp["data"].(map[string]any)
	spaceGUID, _ := data["guid"].(string)
	if spaceGUID == "" {
		problems = append(problems, "Relationships Space must be structured like this: \"space: {\"data\": {\"guid\": \"valid-guid\"}}\"")
	}
	if len(problems) > 0 {
		writeError(w, http.StatusUnprocessableEntity, unprocessable(problems))
		return
	}
	if _, _, ok := spaceOrg(ar.f, spaceGUID); !ok {
		writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{"Invalid space. Ensure that the space exists and you have access to it."}))
		return
	}
	if strings.TrimSpace(name) == "" {
		writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{"name is not present"}))
		return
	}
	a := App{GUID: newUUID(), Name: name, SpaceGUID: spaceGUID, CreatedAt: now(), UpdatedAt: now()}
	if !insertApp(ar.f, a) {
		writeError(w, http.StatusUnprocessableEntity, unprocessable([]string{"App with the name '" + name + "' already exists."}))
		return
	}
	writeJSON(w, http.StatusCreated, presentApp(ar.api.url, a))
}

// get is GET /v3/apps/:guid; 404 "App not found".
func (ar *appRoutes) get(w http.ResponseWriter, r *http.Request) {
	a, ok := getApp(ar.f, r.PathValue("guid"))
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("App"))
		return
	}
	writeJSON(w, http.StatusOK, presentApp(ar.api.url, a))
}

// list is GET /v3/apps, filtered by guids, names, space_guids and
// organization_guids, in creation order or by order_by (name, created_at,
// updated_at, state; a leading - reverses).
func (ar *appRoutes) list(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, appsKind)
	if !ok {
		return
	}
	order := q.filters["order_by"]
	field := ""
	if len(order) == 1 {
		field = strings.TrimPrefix(order[0], "-")
	}
	if len(order) > 0 && !slices.Contains([]string{"created_at", "updated_at", "name", "state"}, field) {
		writeError(w, http.StatusBadRequest, badQuery("Order by can only be: 'created_at', 'updated_at', 'name', 'state'"))
		return
	}
	ar.f.mu.RLock()
	var hits []App
	for _, a := range ar.f.apps.list {
		s, _ := ar.f.spaces.get(a.SpaceGUID)
		if q.matches("guids", a.GUID) && q.matches("names", a.Name) && q.matches("space_guids", a.SpaceGUID) &&
			q.matches("organization_guids", s.OrgGUID) {
			hits = append(hits, a)
		}
	}
	ar.f.mu.RUnlock()
	if len(order) == 1 && field != "state" { // every app is STOPPED: by state is by guid
		sortBy(hits, order[0], func(a App) sortKey { return sortKey{a.Name, a.CreatedAt, a.UpdatedAt, a.GUID} })
	} else if field == "state" {
		sortBy(hits, strings.Replace(order[0], "state", "name", 1), func(a App) sortKey { return sortKey{guid: a.GUID} })
	}
	body, _ := page(ar.api, "/v3/apps", q, hits, func(_ int, a App) any { return presentApp(ar.api.url, a) })
	writeJSON(w, http.StatusOK, body)
}

// insertApp adds an app unless its name is taken in its space.
func insertApp(f *Foundation, a App) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.ContainsFunc(f.apps.list, func(o App) bool { return o.SpaceGUID == a.SpaceGUID && o.Name == a.Name }) {
		return false
	}
	return f.apps.add(a.GUID, a) == nil
}

// getApp is an app by guid.
func getApp(f *Foundation, guid string) (App, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.apps.get(guid)
}
