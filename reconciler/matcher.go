package reconciler

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
)

// Strategy names the matcher strategy that tied a deployment to an instance.
type Strategy string

// The matcher strategies, in the order they are tried.
const (
	// StrategyName matches a name `{planID}-{instanceID}`.
	StrategyName Strategy = "name"
	// StrategyMetadata matches a manifest's properties.blacksmith.
	StrategyMetadata Strategy = "metadata"
	// StrategyRelease matches a release mapped to a service (Config.Releases).
	StrategyRelease Strategy = "release"
	// StrategyRule matches a configured name pattern (Config.Rules).
	StrategyRule Strategy = "rule"
)

// Confidence of each strategy's match, from 0 to 1.
const (
	confidenceName        = 0.9
	confidenceMetadata    = 1.0
	confidenceRelease     = 0.6
	confidenceReleaseNoPl = 0.4
	confidenceRule        = 0.8
)

// uuidSuffix matches a name ending in "-" and a UUID.
var uuidSuffix = regexp.MustCompile(`^(.+)-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$`)

// Match says which service instance a deployment is, and how sure that is.
type Match struct {
	// InstanceID is the service instance's id.
	InstanceID string `json:"instance_id"`
	// ServiceID is the instance's service; empty when no strategy could tell.
	ServiceID string `json:"service_id"`
	// PlanID is the instance's plan; empty when no strategy could tell.
	PlanID string `json:"plan_id"`
	// Strategy is the strategy that matched.
	Strategy Strategy `json:"strategy"`
	// Confidence is how sure the strategy is, from 0 to 1.
	Confidence float64 `json:"confidence"`
	// Rule names the configured rule that matched (StrategyRule only).
	Rule string `json:"rule,omitempty"`
}

// matcher ties deployments to service instances.
type matcher struct {
	catalog  *catalog.Catalog
	releases map[string]string
	rules    []rule
}

// rule is a compiled config.Rule.
type rule struct {
	config.Rule
	re *regexp.Regexp
}

// newMatcher compiles the configured rules.
func newMatcher(cat *catalog.Catalog, cfg config.ReconcilerConfig) (*matcher, error) {
	m := &matcher{catalog: cat, releases: cfg.Releases}
	for i, r := range cfg.Rules {
		c, err := compileRule(r)
		if err != nil {
			return nil, fmt.Errorf("reconciler.rules[%d]: %w", i, err)
		}
		m.rules = append(m.rules, c)
	}
	return m, nil
}

// compileRule compiles a rule's pattern, anchored at both ends, and checks its groups.
func compileRule(r config.Rule) (rule, error) {
	re, err := regexp.Compile(`^(?:` + r.Pattern + `)$`)
	if err != nil {
		return rule{}, fmt.Errorf("compiling pattern: %w", err)
	}
	if re.SubexpIndex("instance") < 0 {
		return rule{}, fmt.Errorf("pattern %q has no (?P<instance>...) group", r.Pattern)
	}
	if re.SubexpIndex("plan") < 0 && r.PlanID == "" {
		return rule{}, fmt.Errorf("pattern %q has no (?P<plan>...) group and no plan_id is set", r.Pattern)
	}
	return rule{Rule: r, re: re}, nil
}

// match tries every strategy in order on a deployment and its manifest (nil
// when not fetched). It returns the first match, or false and the reasons
// every strategy gave.
func (m *matcher) match(d bosh.Deployment, man *manifestInfo) (Match, bool, string) {
	var reasons []string
	for _, try := range []func(bosh.Deployment, *manifestInfo) (Match, string){
		m.byName, m.byMetadata, m.byRelease, m.byRule,
	} {
		got, reason := try(d, man)
		if got.Strategy != "" {
			if reason = badInstanceID(got); reason == "" {
				return got, true, ""
			}
		}
		reasons = append(reasons, reason)
	}
	return Match{}, false, strings.Join(reasons, "; ")
}

// badInstanceID says why a match's instance id cannot name Vault documents
// (empty, "." or "..", a slash, a NUL, spaces at either end), or "".
func badInstanceID(got Match) string {
	id := got.InstanceID
	if id == "" || id == "." || id == ".." || strings.ContainsAny(id, "/\x00") || strings.TrimSpace(id) != id {
		return fmt.Sprintf("%s: %q cannot be an instance id (empty, \".\", \"..\", a slash, a NUL or spaces at either end)", got.Strategy, id)
	}
	return ""
}

// matchByName is strategy 1 on its own: when the name alone matches, the
// instance is known before anything is fetched.
func (m *matcher) matchByName(name string) (Match, bool) {
	got, _ := m.byName(bosh.Deployment{Name: name}, nil)
	return got, got.Strategy != ""
}

// byName is strategy 1: `{planID}-{instanceID}` with a plan of the catalog.
func (m *matcher) byName(d bosh.Deployment, _ *manifestInfo) (Match, string) {
	prefix, id, ok := splitUUID(d.Name)
	if !ok {
		return Match{}, "name: no trailing instance UUID"
	}
	svc, plan, ok := m.plan(prefix)
	if !ok {
		return Match{}, fmt.Sprintf("name: %q is not a plan id of the catalog", prefix)
	}
	return Match{InstanceID: id, ServiceID: svc.ID, PlanID: plan.ID, Strategy: StrategyName, Confidence: confidenceName}, ""
}

// byMetadata is strategy 2: properties.blacksmith in the manifest.
func (m *matcher) byMetadata(_ bosh.Deployment, man *manifestInfo) (Match, string) {
	if man == nil {
		return Match{}, "metadata: no manifest"
	}
	p := man.blacksmith()
	switch {
	case p == nil:
		return Match{}, "metadata: no properties.blacksmith"
	case p.InstanceID == "":
		return Match{}, "metadata: properties.blacksmith has no instance_id"
	case p.PlanID == "" && p.ServiceID == "":
		return Match{}, "metadata: properties.blacksmith has no plan_id nor service_id"
	}
	got := Match{InstanceID: p.InstanceID, ServiceID: p.ServiceID, PlanID: p.PlanID,
		Strategy: StrategyMetadata, Confidence: confidenceMetadata}
	if svc, _, ok := m.plan(p.PlanID); ok && got.ServiceID == "" {
		got.ServiceID = svc.ID
	}
	return got, ""
}

// byRelease is strategy 3: a release mapped to a service, the instance id
// from the name's trailing UUID, the plan from the name's prefix when it
// names one of the service's plans (or the service has a single plan).
func (m *matcher) byRelease(d bosh.Deployment, _ *manifestInfo) (Match, string) {
	serviceID, release := "", ""
	for _, r := range d.Releases {
		if s, ok := m.releases[r.Name]; ok {
			serviceID, release = s, r.Name
			break
		}
	}
	if serviceID == "" {
		return Match{}, "release: no release maps to a service"
	}
	prefix, id, ok := splitUUID(d.Name)
	if !ok {
		return Match{}, fmt.Sprintf("release: %s maps to service %s but the name has no trailing instance UUID", release, serviceID)
	}
	got := Match{InstanceID: id, ServiceID: serviceID, Strategy: StrategyRelease, Confidence: confidenceReleaseNoPl}
	if plan, ok := m.servicePlan(serviceID, prefix); ok {
		got.PlanID, got.Confidence = plan.ID, confidenceRelease
	}
	return got, ""
}

// byRule is strategy 4: the first configured pattern matching the name.
func (m *matcher) byRule(d bosh.Deployment, _ *manifestInfo) (Match, string) {
	if len(m.rules) == 0 {
		return Match{}, "rule: no rules configured"
	}
	for _, r := range m.rules {
		sub := r.re.FindStringSubmatch(d.Name)
		if sub == nil || sub[r.re.SubexpIndex("instance")] == "" {
			continue
		}
		got := Match{InstanceID: sub[r.re.SubexpIndex("instance")], ServiceID: r.ServiceID, PlanID: r.PlanID,
			Strategy: StrategyRule, Confidence: confidenceRule, Rule: r.Name}
		if i := r.re.SubexpIndex("plan"); i >= 0 && sub[i] != "" {
			got.PlanID = sub[i]
		}
		m.resolveRulePlan(&got)
		return got, ""
	}
	return Match{}, "rule: no rule matches the name"
}

// resolveRulePlan turns a plan given by name into its id and fills in the service.
func (m *matcher) resolveRulePlan(got *Match) {
	if svc, plan, ok := m.plan(got.PlanID); ok {
		got.PlanID = plan.ID
		if got.ServiceID == "" {
			got.ServiceID = svc.ID
		}
		return
	}
	for _, svc := range m.services() {
		if got.ServiceID != "" && svc.ID != got.ServiceID {
			continue
		}
		for _, p := range svc.Plans {
			if p.Name == got.PlanID {
				got.PlanID, got.ServiceID = p.ID, svc.ID
				return
			}
		}
	}
}

// refine takes the service and plan of a match from the manifest's
// properties.blacksmith block when it names the matched instance: the broker
// renders the plan there on every deploy, while a name keeps the plan the
// instance was created with.
func (m *matcher) refine(got Match, p *blacksmithProps) Match {
	if p == nil || p.InstanceID != got.InstanceID {
		return got
	}
	if p.PlanID != "" {
		got.PlanID = p.PlanID
		if svc, _, ok := m.plan(p.PlanID); ok {
			got.ServiceID = svc.ID
		}
	}
	if p.ServiceID != "" {
		got.ServiceID = p.ServiceID
	}
	return got
}

// plan looks a plan id up in the catalog.
func (m *matcher) plan(id string) (catalog.Service, catalog.Plan, bool) {
	if m.catalog == nil || id == "" {
		return catalog.Service{}, catalog.Plan{}, false
	}
	return m.catalog.Plan(id)
}

// servicePlan finds the plan of a service that a name prefix names: by id, by
// name, or by a "-name" ending; else the service's only plan.
func (m *matcher) servicePlan(serviceID, prefix string) (catalog.Plan, bool) {
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
func (m *matcher) services() []catalog.Service {
	if m.catalog == nil {
		return nil
	}
	return m.catalog.Services
}

// splitUUID splits "prefix-UUID" into the prefix and the UUID, as written.
func splitUUID(name string) (prefix, id string, ok bool) {
	sub := uuidSuffix.FindStringSubmatch(name)
	if sub == nil {
		return "", "", false
	}
	return sub[1], sub[2], true
}
