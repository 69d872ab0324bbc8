package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/cf"
)

// Service access kinds of register-broker: all (public), none (admins
// only), orgs (the organizations named), keep (left as the platform has it).
const (
	accessAll  = "all"
	accessNone = "none"
	accessOrgs = "orgs"
	accessKeep = "keep"
)

// maxAccessOrgs bounds the organizations one plan is made visible to.
const maxAccessOrgs = 1000

// accessRule is the access one plan is to have.
type accessRule struct {
	kind string
	orgs []string // org names, for accessOrgs
}

// accessRules are register-broker's service access: a rule per plan id,
// and the one for a plan without its own.
type accessRules struct {
	byPlan map[string]accessRule
	def    string
}

// flags adds --access PLAN=all|none, --org PLAN=ORG and --default-access.
func (a *accessRules) flags(fs *flag.FlagSet) {
	a.byPlan, a.def = map[string]accessRule{}, accessAll
	fs.Func("access", "PLAN=all or PLAN=none: the service access of the plan of that id (repeat for more)", func(v string) error {
		plan, kind, ok := strings.Cut(v, "=")
		if !ok || plan == "" || (kind != accessAll && kind != accessNone) {
			return fmt.Errorf("%q: want PLAN=all or PLAN=none", v)
		}
		if _, seen := a.byPlan[plan]; seen {
			return fmt.Errorf("plan %q given twice", plan)
		}
		a.byPlan[plan] = accessRule{kind: kind}
		return nil
	})
	fs.Func("org", "PLAN=ORG: the plan of that id visible to the organization named ORG only (repeat for more orgs and plans)", func(v string) error {
		plan, org, ok := strings.Cut(v, "=")
		if !ok || plan == "" || org == "" || strings.Contains(org, ",") || len(org) > 255 {
			return fmt.Errorf("%q: want PLAN=ORG, an organization name without a comma", v)
		}
		r, seen := a.byPlan[plan]
		if seen && r.kind != accessOrgs {
			return fmt.Errorf("plan %q: given --access %s and --org", plan, r.kind)
		}
		if len(r.orgs) == maxAccessOrgs {
			return fmt.Errorf("plan %q: more than %d organizations", plan, maxAccessOrgs)
		}
		if !slices.Contains(r.orgs, org) {
			r.orgs = append(r.orgs, org)
		}
		a.byPlan[plan] = accessRule{kind: accessOrgs, orgs: r.orgs}
		return nil
	})
	fs.Func("default-access", "all, none or keep: the service access of a plan not named by --access or --org (default all)", func(v string) error {
		if v != accessAll && v != accessNone && v != accessKeep {
			return fmt.Errorf("%q: want all, none or keep", v)
		}
		a.def = v
		return nil
	})
}

// check refuses a rule for a plan the catalog does not have.
func (a *accessRules) check(planIDs []string) error {
	var problems []error
	for id := range a.byPlan {
		if !slices.Contains(planIDs, id) {
			problems = append(problems, fmt.Errorf("service access for plan %q: the catalog has no plan of that id (it has %s)",
				printable(id), strings.Join(planIDs, ", ")))
		}
	}
	slices.SortFunc(problems, func(x, y error) int { return strings.Compare(x.Error(), y.Error()) })
	return errors.Join(problems...)
}

// orgNames are every organization the rules name, sorted, once each.
func (a *accessRules) orgNames() []string {
	var out []string
	for _, r := range a.byPlan {
		out = append(out, r.orgs...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// want is the visibility plan id is to have (false: keep what it has),
// with orgs the guids of the organizations by name; an org that is not
// there is an error naming it.
func (a *accessRules) want(planID string, orgs map[string]string) (cf.Visibility, bool, error) {
	r, ok := a.byPlan[planID]
	if !ok {
		r = accessRule{kind: a.def}
	}
	switch r.kind {
	case accessKeep:
		return cf.Visibility{}, false, nil
	case accessAll:
		return cf.Visibility{Type: cf.VisibilityPublic}, true, nil
	case accessNone:
		return cf.Visibility{Type: cf.VisibilityAdmin}, true, nil
	}
	v := cf.Visibility{Type: cf.VisibilityOrganization}
	for _, name := range r.orgs {
		guid, ok := orgs[name]
		if !ok {
			return cf.Visibility{}, false, fmt.Errorf("plan %s: the platform has no organization %q", printable(planID), printable(name))
		}
		v.Orgs = append(v.Orgs, cf.Org{GUID: guid, Name: name})
	}
	slices.SortFunc(v.Orgs, func(x, y cf.Org) int { return strings.Compare(x.GUID, y.GUID) })
	return v, true, nil
}

// describe is a visibility for the operator: all, none, orgs [a, b], space.
func describe(v cf.Visibility) string {
	switch v.Type {
	case cf.VisibilityPublic:
		return "all (public)"
	case cf.VisibilityAdmin:
		return "none (admin only)"
	case cf.VisibilityOrganization:
		var names []string
		for _, o := range v.Orgs {
			names = append(names, printable(orDash(o.Name)))
		}
		slices.Sort(names)
		return "orgs [" + strings.Join(names, ", ") + "]"
	}
	return printable(v.Type)
}
