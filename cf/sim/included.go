package sim

import (
	"slices"
	"strings"
)

// includedLocked builds included.spaces and included.organizations for the
// instances of a page, as CC's FieldServiceInstanceSpaceDecorator and
// FieldServiceInstanceOrganizationDecorator do: each space (org) once, in
// creation order, with only the fields asked for. It returns nil when no
// fields were asked for.
func (a *api) includedLocked(fields map[string][]string, page []Instance) map[string]any {
	spaceFields, orgFields := fields["space"], fields["space.organization"]
	if len(spaceFields) == 0 && len(orgFields) == 0 {
		return nil
	}
	var spaces []Space
	for _, in := range page {
		if s, ok := a.f.spaces.get(in.SpaceGUID); ok && !slices.ContainsFunc(spaces, func(x Space) bool { return x.GUID == s.GUID }) {
			spaces = append(spaces, s)
		}
	}
	slices.SortStableFunc(spaces, func(a, b Space) int {
		return cmpCreated(a.CreatedAt.Unix(), b.CreatedAt.Unix(), a.GUID, b.GUID)
	})
	out := map[string]any{}
	if len(spaceFields) > 0 {
		list := []map[string]any{}
		for _, s := range spaces {
			list = append(list, pick(spaceFields, s.GUID, s.Name, map[string]any{"organization": relation{guidRef{s.OrgGUID}}}))
		}
		out["spaces"] = list
	}
	if len(orgFields) > 0 {
		var orgs []Org
		for _, s := range spaces {
			if o, ok := a.f.orgs.get(s.OrgGUID); ok && !slices.ContainsFunc(orgs, func(x Org) bool { return x.GUID == o.GUID }) {
				orgs = append(orgs, o)
			}
		}
		slices.SortStableFunc(orgs, func(a, b Org) int { return cmpCreated(a.CreatedAt.Unix(), b.CreatedAt.Unix(), a.GUID, b.GUID) })
		list := []map[string]any{}
		for _, o := range orgs {
			list = append(list, pick(orgFields, o.GUID, o.Name, nil))
		}
		out["organizations"] = list
	}
	return out
}

// pick keeps the fields asked for; relationships is written for
// "relationships.organization".
func pick(fields []string, guid, name string, relationships map[string]any) map[string]any {
	m := map[string]any{}
	for _, f := range fields {
		switch f {
		case "guid":
			m["guid"] = guid
		case "name":
			m["name"] = name
		case "relationships.organization":
			m["relationships"] = relationships
		}
	}
	return m
}

func cmpCreated(a, b int64, ga, gb string) int {
	if a != b {
		if a < b {
			return -1
		}
		return 1
	}
	return strings.Compare(ga, gb)
}
