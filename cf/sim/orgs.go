package sim

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"
)

// The organizations and spaces routes, as the cf CLI reads them (cf orgs,
// cf spaces, cf target -o -s): list with guids, names (and, for spaces,
// organization_guids) and order_by, get by guid.
var (
	orgsKind = listKind{
		allowed:   append(slices.Clip(listBase), "names", "label_selector"),
		simulated: []string{"guids", "names", "order_by"},
	}
	spacesKind = listKind{
		allowed:   append(slices.Clip(listBase), "names", "organization_guids", "include", "label_selector"),
		simulated: []string{"guids", "names", "organization_guids", "order_by"},
	}
)

// orderings are the order_by values of the organizations' and spaces'
// lists (a leading - reverses), as OrganizationsListMessage takes them.
var orderings = []string{"created_at", "updated_at", "name"}

// orderBy reads q's order_by; "" and true when none, false (answered 400)
// when it is not one CC takes.
func orderBy(w http.ResponseWriter, q listQuery) (string, bool) {
	v := q.filters["order_by"]
	if len(v) == 0 {
		return "", true
	}
	if len(v) == 1 && slices.Contains(orderings, strings.TrimPrefix(v[0], "-")) {
		return v[0], true
	}
	writeError(w, http.StatusBadRequest, badQuery("Order by can only be: 'created_at', 'updated_at', 'name'"))
	return "", false
}

// sortKey is what order_by may sort a resource by.
type sortKey struct {
	name             string
	created, updated time.Time
	guid             string
}

// sortBy orders hits by order (name, created_at or updated_at; a leading -
// reverses), then by guid in the same direction, as CC's SequelPaginator
// does; "" keeps creation order.
func sortBy[T any](hits []T, order string, key func(T) sortKey) {
	field := strings.TrimPrefix(order, "-")
	if field == "" {
		return
	}
	slices.SortStableFunc(hits, func(x, y T) int {
		a, b := key(x), key(y)
		var c int
		switch field {
		case "name":
			c = cmp.Compare(a.name, b.name)
		case "updated_at":
			c = a.updated.Compare(b.updated)
		default:
			c = a.created.Compare(b.created)
		}
		if c == 0 {
			c = cmp.Compare(a.guid, b.guid)
		}
		if strings.HasPrefix(order, "-") {
			return -c
		}
		return c
	})
}

type orgJSON struct {
	GUID          string              `json:"guid"`
	CreatedAt     time.Time           `json:"created_at"`
	UpdatedAt     time.Time           `json:"updated_at"`
	Name          string              `json:"name"`
	Suspended     bool                `json:"suspended"`
	Relationships map[string]relation `json:"relationships"`
	Metadata      metadata            `json:"metadata"`
	Links         map[string]href     `json:"links"`
}

func (a *api) presentOrg(o Org) orgJSON {
	self := a.url + "/v3/organizations/" + o.GUID
	return orgJSON{GUID: o.GUID, CreatedAt: o.CreatedAt, UpdatedAt: o.CreatedAt, Name: o.Name,
		Relationships: map[string]relation{"quota": {guidRef{a.quota}}}, Metadata: emptyMetadata(),
		Links: map[string]href{"self": {self}, "domains": {self + "/domains"}, "default_domain": {self + "/domains/default"},
			"quota": {a.url + "/v3/organization_quotas/" + a.quota}}}
}

// nullData is a to-one relationship without a target: {"data": null}.
type nullData struct {
	Data *guidRef `json:"data"`
}

type spaceJSON struct {
	GUID          string          `json:"guid"`
	CreatedAt     time.Time       `json:"created_at"`
	UpdatedAt     time.Time       `json:"updated_at"`
	Name          string          `json:"name"`
	Relationships map[string]any  `json:"relationships"`
	Metadata      metadata        `json:"metadata"`
	Links         map[string]href `json:"links"`
}

func (a *api) presentSpace(s Space) spaceJSON {
	self := a.url + "/v3/spaces/" + s.GUID
	return spaceJSON{GUID: s.GUID, CreatedAt: s.CreatedAt, UpdatedAt: s.CreatedAt, Name: s.Name,
		Relationships: map[string]any{"organization": relation{guidRef{s.OrgGUID}}, "quota": nullData{}},
		Metadata:      emptyMetadata(),
		Links: map[string]href{"self": {self}, "organization": {a.url + "/v3/organizations/" + s.OrgGUID},
			"features": {self + "/features"}, "apply_manifest": {self + "/actions/apply_manifest"}}}
}

func (a *api) listOrgs(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, orgsKind)
	if !ok {
		return
	}
	order, ok := orderBy(w, q)
	if !ok {
		return
	}
	a.f.mu.RLock()
	var hits []Org
	for _, o := range a.f.orgs.list {
		if q.matches("guids", o.GUID) && q.matches("names", o.Name) {
			hits = append(hits, o)
		}
	}
	a.f.mu.RUnlock()
	sortBy(hits, order, func(o Org) sortKey { return sortKey{o.Name, o.CreatedAt, o.CreatedAt, o.GUID} })
	body, _ := page(a, "/v3/organizations", q, hits, func(_ int, o Org) any { return a.presentOrg(o) })
	writeJSON(w, http.StatusOK, body)
}

func (a *api) getOrg(w http.ResponseWriter, r *http.Request) {
	a.f.mu.RLock()
	o, ok := a.f.orgs.get(r.PathValue("guid"))
	a.f.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Organization"))
		return
	}
	writeJSON(w, http.StatusOK, a.presentOrg(o))
}

func (a *api) listSpaces(w http.ResponseWriter, r *http.Request) {
	q, ok := parse(w, r, spacesKind)
	if !ok {
		return
	}
	order, ok := orderBy(w, q)
	if !ok {
		return
	}
	a.f.mu.RLock()
	var hits []Space
	for _, s := range a.f.spaces.list {
		if q.matches("guids", s.GUID) && q.matches("names", s.Name) && q.matches("organization_guids", s.OrgGUID) {
			hits = append(hits, s)
		}
	}
	a.f.mu.RUnlock()
	sortBy(hits, order, func(s Space) sortKey { return sortKey{s.Name, s.CreatedAt, s.CreatedAt, s.GUID} })
	body, _ := page(a, "/v3/spaces", q, hits, func(_ int, s Space) any { return a.presentSpace(s) })
	writeJSON(w, http.StatusOK, body)
}

func (a *api) getSpace(w http.ResponseWriter, r *http.Request) {
	a.f.mu.RLock()
	s, ok := a.f.spaces.get(r.PathValue("guid"))
	a.f.mu.RUnlock()
	if !ok {
		writeError(w, http.StatusNotFound, resourceNotFound("Space"))
		return
	}
	writeJSON(w, http.StatusOK, a.presentSpace(s))
}
