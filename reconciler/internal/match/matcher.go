package match

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/internal/ids"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// Confidence of each strategy's match, from 0 to 1.
const (
	ConfidenceName        = 0.9
	ConfidenceMetadata    = 1.0
	ConfidenceRelease     = 0.6
	ConfidenceReleaseNoPl = 0.4
	ConfidenceRule        = 0.8
)

// Matcher ties deployments to service instances. It is safe for concurrent
// use (it never changes once made).
type Matcher struct {
	catalog  *catalog.Catalog
	releases map[string]string
	rules    []rule
}

// rule is a compiled config.Rule.
type rule struct {
	config.Rule
	re *regexp.Regexp
}

// New compiles the configured rules and checks that the services and plans
// the rules and releases name are in the catalog (when there is one); the
// error names every problem, each by its configuration key. A nil catalog
// is an empty one.
func New(cat *catalog.Catalog, cfg config.ReconcilerConfig) (*Matcher, error) {
	m := &Matcher{catalog: cat, releases: cfg.Releases}
	var errs []error
	for i, r := range cfg.Rules {
		c, err := compileRule(r)
		if err != nil {
			errs = append(errs, fmt.Errorf("reconciler.rules[%d]: %w", i, err))
		}
		m.rules = append(m.rules, c)
	}
	if cat != nil {
		errs = append(errs, m.unknownToCatalog(cfg)...)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return m, nil
}

// unknownToCatalog names the services and plans of the configured releases
// and rules that the catalog does not have.
func (m *Matcher) unknownToCatalog(cfg config.ReconcilerConfig) []error {
	var errs []error
	for _, release := range slices.Sorted(maps.Keys(cfg.Releases)) {
		if id := cfg.Releases[release]; !m.hasService(id) {
			errs = append(errs, fmt.Errorf("reconciler.releases.%s: service %q is not in the catalog", release, id))
		}
	}
	for i, r := range cfg.Rules {
		if r.ServiceID != "" && !m.hasService(r.ServiceID) {
			errs = append(errs, fmt.Errorf("reconciler.rules[%d].service_id: service %q is not in the catalog", i, r.ServiceID))
		}
		if got := (report.Match{ServiceID: r.ServiceID, PlanID: r.PlanID}); r.PlanID != "" && !m.resolveRulePlan(&got) {
			errs = append(errs, fmt.Errorf("reconciler.rules[%d].plan_id: %q is no plan id or name of %s", i, r.PlanID, ofWhat(r.ServiceID)))
		}
	}
	return errs
}

// ofWhat names where a plan was looked for.
func ofWhat(serviceID string) string {
	if serviceID == "" {
		return "the catalog"
	}
	return fmt.Sprintf("service %q", serviceID)
}

// compileRule compiles a rule's pattern as the configuration checks it (config.Rule.Compile).
func compileRule(r config.Rule) (rule, error) {
	re, err := r.Compile()
	if err != nil {
		return rule{}, fmt.Errorf("compiling pattern %q: %w", r.Pattern, err)
	}
	return rule{Rule: r, re: re}, nil
}

// Match tries every strategy in order on a deployment and its manifest (nil
// when not fetched). It returns the first match, or false and the reasons
// every strategy gave. A deployment whose name the broker could not have
// made (internal/ids) is not matched: its name would reach a record.
func (m *Matcher) Match(d bosh.Deployment, man *Manifest) (report.Match, bool, string) {
	if why := ids.Deployment(d.Name); why != "" {
		return report.Match{}, false, fmt.Sprintf("deployment name %s cannot be recorded: %s", quote(d.Name), why)
	}
	var reasons []string
	for _, try := range []func(bosh.Deployment, *Manifest) (report.Match, string){
		m.byName, m.byMetadata, m.byRelease, m.byRule,
	} {
		got, reason := try(d, man)
		if got.Strategy != "" {
			if reason = BadInstanceID(got); reason == "" {
				reason = m.badPlan(got)
			}
			if reason == "" {
				return got, true, ""
			}
		}
		reasons = append(reasons, reason)
	}
	return report.Match{}, false, strings.Join(reasons, "; ")
}

// BadInstanceID says why a match's instance id is not one the broker could
// have been given (the OSB id rules of internal/ids: ASCII letters, digits,
// '-', '_' and '.', not reserved), or "". Nothing is written for it.
func BadInstanceID(got report.Match) string {
	if why := ids.Instance(got.InstanceID); why != "" {
		return fmt.Sprintf("%s: %s cannot be an instance id: %s", got.Strategy, quote(got.InstanceID), why)
	}
	return ""
}

// badPlan says why a match's plan and service ids (a Director's content:
// a deployment name, properties.blacksmith) are not ones the broker could
// have written, or "": ids of the characters of internal/ids, at most
// ids.MaxLength; with a catalog, a plan and a service it knows, the plan
// of that service. Nothing is written for such a match: the deployment is
// unmatched with the reason.
func (m *Matcher) badPlan(got report.Match) string {
	for _, f := range []struct{ name, id string }{{"plan_id", got.PlanID}, {"service_id", got.ServiceID}} {
		if f.id != "" && (len(f.id) > ids.MaxLength || !ids.Chars(f.id)) {
			return fmt.Sprintf("%s: its %s is not one the broker could have written (ASCII letters, digits, '-', '_' and '.', "+
				"at most %d characters)", got.Strategy, f.name, ids.MaxLength)
		}
	}
	if m.catalog == nil {
		return ""
	}
	if got.PlanID != "" {
		svc, _, ok := m.plan(got.PlanID)
		switch {
		case !ok:
			return fmt.Sprintf("%s: plan_id %s is not in the catalog", got.Strategy, quote(got.PlanID))
		case got.ServiceID != "" && got.ServiceID != svc.ID:
			return fmt.Sprintf("%s: plan %s is of service %q, not %s", got.Strategy, quote(got.PlanID), svc.ID, quote(got.ServiceID))
		}
		return ""
	}
	if got.ServiceID != "" && !slices.ContainsFunc(m.services(), func(s catalog.Service) bool { return s.ID == got.ServiceID }) {
		return fmt.Sprintf("%s: service_id %s is not in the catalog", got.Strategy, quote(got.ServiceID))
	}
	return ""
}

// Refine takes the service and plan of a match from the manifest's
// properties.blacksmith block when it names the matched instance: the broker
// renders the plan there on every deploy, while a name keeps the plan the
// instance was created with. Ids the matcher would refuse (badPlan) are not
// taken: the match keeps its own.
func (m *Matcher) Refine(got report.Match, p *Props) report.Match {
	if p == nil || p.InstanceID != got.InstanceID {
		return got
	}
	if refined := m.refine(got, p); m.badPlan(refined) == "" {
		return refined
	}
	return got
}

func (m *Matcher) refine(got report.Match, p *Props) report.Match {
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

// maxQuoted bounds what a reason quotes of a Director's content (a name, an
// id, a manifest's key): the first 64 bytes, so that a hostile manifest
// cannot make a reason, an error or a status of megabytes.
const maxQuoted = 64

// quote is s, cut to maxQuoted bytes, as a Go string literal.
func quote(s string) string { return strconv.Quote(report.Truncate(s, maxQuoted)) }
