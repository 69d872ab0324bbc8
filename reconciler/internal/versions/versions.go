package versions

import (
	"cmp"
	"maps"
	"slices"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// maxListed bounds the outdated instances a report lists (it counts them all).
const maxListed = 100

// Outdated lists the instances whose record holds an older version than
// their plan declares, or none: the oldest version first, then by id.
// Orphaned records (no deployment to upgrade), plans the catalog does not
// know and plans without maintenance_info are left out.
func Outdated(index map[string]*vault.Record, cat *catalog.Catalog) []report.Outdated {
	var out []report.Outdated
	for id, rec := range index {
		if rec == nil || rec.Orphaned || cat == nil {
			continue
		}
		_, plan, ok := cat.Plan(rec.PlanID)
		if !ok || plan.MaintenanceInfo == nil {
			continue
		}
		want := plan.MaintenanceInfo.Version
		if rec.MaintenanceVersion != "" && catalog.CompareVersions(rec.MaintenanceVersion, want) >= 0 {
			continue
		}
		out = append(out, report.Outdated{InstanceID: id, ServiceID: rec.ServiceID, PlanID: rec.PlanID,
			Deployment: rec.Deployment(id), Version: rec.MaintenanceVersion, Want: want, Adopted: rec.Adopted})
	}
	slices.SortFunc(out, func(a, b report.Outdated) int {
		return cmp.Or(catalog.CompareVersions(a.Version, b.Version), strings.Compare(a.InstanceID, b.InstanceID))
	})
	return out
}

// Summarize is a run's report of them: every one counted, by plan, the
// first maxListed listed.
func Summarize(list []report.Outdated) *report.OutdatedReport {
	r := &report.OutdatedReport{Count: len(list), ByPlan: map[string]int{}, Instances: list[:min(len(list), maxListed)]}
	for _, o := range list {
		r.ByPlan[o.PlanID]++
	}
	if r.Instances == nil {
		r.Instances = []report.Outdated{}
	}
	return r
}

// Doc is the state document of what the webhooks were told: the version
// each outdated instance's plan wanted when it was announced.
type Doc struct {
	Announced map[string]string `json:"announced"`
}

// DocName is the state document's name.
const DocName = "outdated"

// Announce returns the instances of list to announce (not announced yet
// for the version their plan now wants) and the document after: those
// announced, the others no longer outdated dropped.
func Announce(doc Doc, list []report.Outdated) (Doc, []report.Outdated) {
	next := Doc{Announced: map[string]string{}}
	var fresh []report.Outdated
	for _, o := range list {
		if doc.Announced[o.InstanceID] != o.Want {
			fresh = append(fresh, o)
		}
		next.Announced[o.InstanceID] = o.Want
	}
	return next, fresh
}

// Equal says whether two documents hold the same announcements.
func (d Doc) Equal(o Doc) bool { return maps.Equal(d.Announced, o.Announced) }
