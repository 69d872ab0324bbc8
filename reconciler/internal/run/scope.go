package run

import (
	"regexp"
	"slices"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// owners tells who owns a deployment without fetching it, for the run's
// scope and its quarantine: the instance its name tells, else the index
// record that names it.
type owners struct {
	scope   report.Scope
	matcher *match.Matcher
	index   map[string]*vault.Record
	byDep   map[string]string
}

// owner tells who owns deployment name; known is false when neither its
// name nor the index tells (its manifest would: it is out of any scope but
// the deployment's own).
func (o owners) owner(name string) (report.Owner, bool) {
	if mt, ok := o.matcher.ByName(name); ok {
		return report.Owner{Instance: mt.InstanceID, Service: mt.ServiceID, Plan: mt.PlanID}, true
	}
	if id, ok := o.byDep[name]; ok {
		rec := o.index[id]
		return report.Owner{Instance: id, Service: rec.ServiceID, Plan: rec.PlanID}, true
	}
	return report.Owner{}, false
}

// instanceOf is the instance a deployment's records belong to: by its
// name, else the index record that names it; "" when unknown.
func (o owners) instanceOf(name string) string {
	if mt, ok := o.matcher.ByName(name); ok {
		return mt.InstanceID
	}
	for id, rec := range o.index {
		if rec.Deployment(id) == name {
			return id
		}
	}
	return ""
}

// covers says whether a quarantine key (deployment or instance) is within
// the run's scope: a scoped run releases nothing it did not look at.
func (o owners) covers(key string) bool {
	if o.scope.Empty() {
		return true
	}
	kind, name := splitKey(key)
	if kind == "deployment" {
		ow, known := o.owner(name)
		return o.scope.Covers(name, ow, known)
	}
	if rec := o.index[name]; rec != nil {
		return o.scope.CoversRecord(name, rec)
	}
	return name == o.scope.Instance
}

// deployments is deps within the scope (all of them for an empty scope).
func (o owners) deployments(deps []bosh.Deployment) []bosh.Deployment {
	if o.scope.Empty() {
		return deps
	}
	out := make([]bosh.Deployment, 0, len(deps))
	for _, d := range deps {
		ow, known := o.owner(d.Name)
		if o.scope.Covers(d.Name, ow, known) {
			out = append(out, d)
		}
	}
	return out
}

// splitKey splits a failure or quarantine key into its kind ("deployment"
// or "instance") and name.
func splitKey(key string) (kind, name string) {
	kind, name, _ = strings.Cut(key, " ")
	return kind, name
}

// notIgnored is deps without those Config.Ignore names.
func notIgnored(deps []bosh.Deployment, ignore []*regexp.Regexp) []bosh.Deployment {
	if len(ignore) == 0 {
		return deps
	}
	out := make([]bosh.Deployment, 0, len(deps))
	for _, d := range deps {
		if !slices.ContainsFunc(ignore, func(re *regexp.Regexp) bool { return re.MatchString(d.Name) }) {
			out = append(out, d)
		}
	}
	return out
}

// scopeOrNil is the summary's scope: nil for everything.
func scopeOrNil(s report.Scope) *report.Scope {
	if s.Empty() {
		return nil
	}
	return &s
}
