package cf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// Plan visibility types, as the Cloud Controller names them
// (ServicePlanVisibilityTypes): public (all), admin (none but admins),
// organization (the orgs listed) and space (a space-scoped broker's plan).
const (
	VisibilityPublic       = "public"
	VisibilityAdmin        = "admin"
	VisibilityOrganization = "organization"
	VisibilitySpace        = "space"
)

// maxVisibilityOrgs bounds the orgs read of one plan's visibility.
const maxVisibilityOrgs = 10000

// Org is an organization: its guid and name.
type Org struct{ GUID, Name string }

// Visibility is who may use a plan: its type and, for organization, the orgs.
type Visibility struct {
	Type string
	Orgs []Org // sorted by guid
}

// Equal says whether v and o give access to the same: the same type and,
// for organization, the same org guids in any order.
func (v Visibility) Equal(o Visibility) bool {
	return v.Type == o.Type && slices.Equal(orgGUIDs(v.Orgs), orgGUIDs(o.Orgs))
}

// orgGUIDs are the orgs' guids, sorted, once each.
func orgGUIDs(orgs []Org) []string {
	out := make([]string, 0, len(orgs))
	for _, o := range orgs {
		out = append(out, o.GUID)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ParseVisibility decodes GET /v3/service_plans/:guid/visibility; an
// unknown type is refused. Texts are bounded; it never panics.
func ParseVisibility(body []byte) (Visibility, error) {
	var v struct {
		Type string `json:"type"`
		Orgs []struct {
			GUID string `json:"guid"`
			Name string `json:"name"`
		} `json:"organizations"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		return Visibility{}, fmt.Errorf("undecodable visibility: %s", clean(err.Error()))
	}
	switch v.Type {
	case VisibilityPublic, VisibilityAdmin, VisibilityOrganization, VisibilitySpace:
	default:
		return Visibility{}, fmt.Errorf("unknown visibility type %q", clean(v.Type))
	}
	if len(v.Orgs) > maxVisibilityOrgs {
		return Visibility{}, fmt.Errorf("%d organizations: over %d", len(v.Orgs), maxVisibilityOrgs)
	}
	out := Visibility{Type: v.Type}
	for _, o := range v.Orgs {
		if o.GUID == "" {
			return Visibility{}, errors.New("an organization without a guid")
		}
		out.Orgs = append(out.Orgs, Org{GUID: clean(o.GUID), Name: clean(o.Name)})
	}
	slices.SortFunc(out.Orgs, func(a, b Org) int { return strings.Compare(a.GUID, b.GUID) })
	return out, nil
}

// PlanVisibility reads who may use the plan.
func (a *Admin) PlanVisibility(ctx context.Context, planGUID string) (Visibility, error) {
	u, err := a.visibilityURL(planGUID)
	if err != nil {
		return Visibility{}, err
	}
	res, err := a.c.get(ctx, epVisible, u)
	if err != nil {
		return Visibility{}, err
	}
	v, err := ParseVisibility(res.body)
	if err != nil {
		return Visibility{}, &unavailable{fmt.Errorf("cloud controller: GET %s: %w", epVisible, err)}
	}
	return v, nil
}

// SetPlanVisibility replaces who may use the plan (PATCH
// /v3/service_plans/:guid/visibility): public, admin, or organization with
// v.Orgs (their guids) the only orgs.
func (a *Admin) SetPlanVisibility(ctx context.Context, planGUID string, v Visibility) error {
	type orgRef struct {
		GUID string `json:"guid"`
	}
	body := struct {
		Type string   `json:"type"`
		Orgs []orgRef `json:"organizations,omitempty"`
	}{Type: v.Type}
	switch {
	case v.Type == VisibilityOrganization && len(v.Orgs) == 0:
		return errors.New("cloud controller: an organization visibility needs at least one organization")
	case v.Type != VisibilityOrganization && len(v.Orgs) > 0:
		return fmt.Errorf("cloud controller: a %s visibility takes no organizations", v.Type)
	case v.Type != VisibilityPublic && v.Type != VisibilityAdmin && v.Type != VisibilityOrganization:
		return fmt.Errorf("cloud controller: visibility type %q: want public, admin or organization", clean(v.Type))
	}
	for _, o := range v.Orgs {
		body.Orgs = append(body.Orgs, orgRef{o.GUID})
	}
	raw, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("cloud controller: encoding a visibility: %w", err)
	}
	u, err := a.visibilityURL(planGUID)
	if err != nil {
		return err
	}
	_, err = a.c.do(ctx, http.MethodPatch, epVisible, u, raw)
	return err
}

func (a *Admin) visibilityURL(planGUID string) (*url.URL, error) {
	u, err := a.c.guidURL("/v3/service_plans/", planGUID)
	if err != nil {
		return nil, err
	}
	u.Path += "/visibility"
	u.RawPath += "/visibility"
	return u, nil
}

// Organizations returns the orgs of those names that exist (all pages
// read); a name holding a comma is refused, as the names filter splits on it.
func (a *Admin) Organizations(ctx context.Context, names []string) ([]Org, error) {
	if len(names) == 0 {
		return nil, nil
	}
	for _, n := range names {
		if n == "" || strings.Contains(n, ",") {
			return nil, fmt.Errorf("cloud controller: organization name %q: empty or holding a comma", clean(n))
		}
	}
	q := url.Values{"names": {strings.Join(names, ",")}, "per_page": {fmt.Sprint(a.c.opts.PerPage)}}
	var out []Org
	err := list(ctx, a.c, epOrgs, a.c.apiURL(epOrgs, q), func(p Page[Org, struct{}]) error {
		out = append(out, p.Resources...)
		return nil
	})
	return out, err
}
