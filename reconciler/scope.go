package reconciler

import (
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// ownerOf tells who owns deployment name; known is false when neither its
// name nor the index tells (its manifest would: it is out of any scope but
// the deployment's own).
func (r *run) ownerOf(name string) (o report.Owner, known bool) {
	if mt, ok := r.parts.matcher.matchByName(name); ok {
		return report.Owner{Instance: mt.InstanceID, Service: mt.ServiceID, Plan: mt.PlanID}, true
	}
	if id, ok := r.byDep[name]; ok {
		rec := r.index[id]
		return report.Owner{Instance: id, Service: rec.ServiceID, Plan: rec.PlanID}, true
	}
	return report.Owner{}, false
}

// scoped is deps within the run's scope (all of them for an empty scope).
func (r *run) scoped(deps []bosh.Deployment) []bosh.Deployment {
	sc := r.opts.Scope
	if sc.Empty() {
		return deps
	}
	out := make([]bosh.Deployment, 0, len(deps))
	for _, d := range deps {
		o, known := r.ownerOf(d.Name)
		if sc.Covers(d.Name, o, known) {
			out = append(out, d)
		}
	}
	return out
}
