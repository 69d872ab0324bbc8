package match

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// ByName is strategy 1 on its own: when the name alone matches, the
// instance is known before anything is fetched.
func (m *Matcher) ByName(name string) (report.Match, bool) {
	got, _ := m.byName(bosh.Deployment{Name: name}, nil)
	return got, got.Strategy != ""
}

// Foreign says nothing about a deployment no strategy matched is the
// broker's: its name ends in no instance UUID, its manifest (read) has no
// properties.blacksmith, none of its releases maps to a service and no rule
// names it. Another kind of deployment on a shared Director (cf,
// concourse...): reported apart, it does not keep a run from converging.
// A deployment whose manifest was not read is not called foreign.
func Foreign(m *Matcher, d bosh.Deployment, man *Manifest) bool {
	if _, _, ok := splitUUID(d.Name); ok || man == nil || man.Blacksmith() != nil {
		return false
	}
	for _, r := range d.Releases {
		if _, ok := m.releases[r.Name]; ok {
			return false
		}
	}
	got, _ := m.byRule(d, man)
	return got.Strategy == ""
}

// byName is strategy 1: `{planID}-{instanceID}` with a plan of the catalog.
func (m *Matcher) byName(d bosh.Deployment, _ *Manifest) (report.Match, string) {
	prefix, id, ok := splitUUID(d.Name)
	if !ok {
		return report.Match{}, "name: no trailing instance UUID"
	}
	svc, plan, ok := m.plan(prefix)
	if !ok {
		return report.Match{}, fmt.Sprintf("name: %s is not a plan id of the catalog", quote(prefix))
	}
	return report.Match{InstanceID: id, ServiceID: svc.ID, PlanID: plan.ID, Strategy: report.StrategyName, Confidence: ConfidenceName}, ""
}

// byMetadata is strategy 2: properties.blacksmith in the manifest.
func (m *Matcher) byMetadata(_ bosh.Deployment, man *Manifest) (report.Match, string) {
	if man == nil {
		return report.Match{}, "metadata: no manifest"
	}
	p := man.Blacksmith()
	switch {
	case p == nil:
		return report.Match{}, "metadata: no properties.blacksmith"
	case p.InstanceID == "":
		return report.Match{}, "metadata: properties.blacksmith has no instance_id"
	case p.PlanID == "" && p.ServiceID == "":
		return report.Match{}, "metadata: properties.blacksmith has no plan_id nor service_id"
	}
	got := report.Match{InstanceID: p.InstanceID, ServiceID: p.ServiceID, PlanID: p.PlanID,
		Strategy: report.StrategyMetadata, Confidence: ConfidenceMetadata}
	if svc, _, ok := m.plan(p.PlanID); ok && got.ServiceID == "" {
		got.ServiceID = svc.ID
	}
	return got, ""
}

// byRelease is strategy 3: a release mapped to a service, the instance id
// from the name's trailing UUID, the plan from the name's prefix when it
// names one of the service's plans (or the service has a single plan).
func (m *Matcher) byRelease(d bosh.Deployment, _ *Manifest) (report.Match, string) {
	serviceID, release := "", ""
	for _, r := range d.Releases {
		if s, ok := m.releases[r.Name]; ok {
			serviceID, release = s, r.Name
			break
		}
	}
	if serviceID == "" {
		return report.Match{}, "release: no release maps to a service"
	}
	prefix, id, ok := splitUUID(d.Name)
	if !ok {
		return report.Match{}, fmt.Sprintf("release: %s maps to service %s but the name has no trailing instance UUID", release, serviceID)
	}
	got := report.Match{InstanceID: id, ServiceID: serviceID, Strategy: report.StrategyRelease, Confidence: ConfidenceReleaseNoPl}
	if plan, ok := m.servicePlan(serviceID, prefix); ok {
		got.PlanID, got.Confidence = plan.ID, ConfidenceRelease
	}
	return got, ""
}

// byRule is strategy 4: the first configured pattern matching the name.
func (m *Matcher) byRule(d bosh.Deployment, _ *Manifest) (report.Match, string) {
	if len(m.rules) == 0 {
		return report.Match{}, "rule: no rules configured"
	}
	for _, r := range m.rules {
		sub := r.re.FindStringSubmatch(d.Name)
		if sub == nil || sub[r.re.SubexpIndex("instance")] == "" {
			continue
		}
		got := report.Match{InstanceID: sub[r.re.SubexpIndex("instance")], ServiceID: r.ServiceID, PlanID: r.PlanID,
			Strategy: report.StrategyRule, Confidence: ConfidenceRule, Rule: r.Name}
		if i := r.re.SubexpIndex("plan"); i >= 0 && sub[i] != "" {
			got.PlanID = sub[i]
		}
		m.resolveRulePlan(&got)
		return got, ""
	}
	return report.Match{}, "rule: no rule matches the name"
}

// resolveRulePlan turns a plan given by name into its id and fills in the
// service; false when the catalog has no such plan (got is left as it is).
func (m *Matcher) resolveRulePlan(got *report.Match) bool {
	if svc, plan, ok := m.plan(got.PlanID); ok && (got.ServiceID == "" || got.ServiceID == svc.ID) {
		got.PlanID, got.ServiceID = plan.ID, svc.ID
		return true
	}
	for _, svc := range m.services() {
		if got.ServiceID != "" && svc.ID != got.ServiceID {
			continue
		}
		for _, p := range svc.Plans {
			if p.Name == got.PlanID {
				got.PlanID, got.ServiceID = p.ID, svc.ID
				return true
			}
		}
	}
	return false
}

// hasService says whether the catalog has a service.
func (m *Matcher) hasService(id string) bool {
	return slices.ContainsFunc(m.services(), func(s catalog.Service) bool { return s.ID == id })
}

// plan looks a plan id up in the catalog.
func (m *Matcher) plan(id string) (catalog.Service, catalog.Plan, bool) {
	if m.catalog == nil || id == "" {
		return catalog.Service{}, catalog.Plan{}, false
	}
	return m.catalog.Plan(id)
}

// servicePlan finds the plan of a service that a name prefix names: by id, by
// name, or by a "-name" ending; else the service's only plan.
func (m *Matcher) servicePlan(serviceID, prefix string) (catalog.Plan, bool) {
	for _, svc := range m.services() {
		if svc.ID != serviceID {
			continue
		}
		for _, p := range svc.Plans {
			if p.ID == prefix || p.Name == prefix || strings.HasSuffix(prefix, "-"+p.Name) {
				return p, true
			}
		}
		if len(svc.Plans) == 1 {
			return svc.Plans[0], true
		}
	}
	return catalog.Plan{}, false
}

// services lists the catalog's services (none without a catalog).
func (m *Matcher) services() []catalog.Service {
	if m.catalog == nil {
		return nil
	}
	return m.catalog.Services
}

// uuidLen is the length of a UUID as text (8-4-4-4-12 hex digits).
const uuidLen = 36

// splitUUID splits "prefix-UUID" into the prefix (not empty, without a
// newline) and the UUID, as written. (A regular expression did this: it
// was an eighth of a steady run's CPU.)
func splitUUID(name string) (prefix, id string, ok bool) {
	n := len(name) - uuidLen
	if n < 2 || name[n-1] != '-' || !isUUID(name[n:]) || strings.ContainsRune(name[:n-1], '\n') {
		return "", "", false
	}
	return name[:n-1], name[n:], true
}

// isUUID says whether s is a UUID: hex digits, either case, in groups of
// 8, 4, 4, 4 and 12 joined by "-".
func isUUID(s string) bool {
	if len(s) != uuidLen {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
}
