package upgrade

import (
	"cmp"
	"slices"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Candidate is an instance a fleet upgrade selected, as the index said.
type Candidate struct {
	InstanceID string
	Deployment string
	// Director is the Director's name (the first one's when the record
	// names none).
	Director  string
	ServiceID string
	PlanID    string
	// From is the recorded version ("" none), To the plan's.
	From, To string
}

func (c Candidate) result(state string) report.UpgradeResult {
	return report.UpgradeResult{InstanceID: c.InstanceID, Deployment: c.Deployment, Director: c.Director, ServiceID: c.ServiceID,
		PlanID: c.PlanID, From: c.From, To: c.To, State: state}
}

// Selection is what a fleet upgrade starts from.
type Selection struct {
	// Candidates are to be upgraded, oldest version first, then by id.
	Candidates []Candidate
	// Settled are the instances in scope not to be tried, with why:
	// orphaned, adopted, quarantined (Skipped), and instances named by id
	// that are at their plan's version (Current) or cannot be upgraded.
	Settled []report.UpgradeResult
}

// Select picks from the index the instances in scope that are behind their
// plan's maintenance_info version (or record none while their plan declares
// one). first is the name of the Director a record naming none lives on;
// quarantined says why an instance is set aside ("" when it is not): an
// instance the scope names by id is tried whatever its quarantine.
func Select(index map[string]*vault.Record, cat *catalog.Catalog, scope report.UpgradeScope, first string, quarantined func(id string) string) Selection {
	var sel Selection
	if cat == nil {
		cat = &catalog.Catalog{}
	}
	named := map[string]bool{}
	for _, id := range scope.Instances {
		named[id] = true
	}
	for id, rec := range index {
		if rec == nil || !scope.Holds(id, rec, first) {
			continue
		}
		c := Candidate{InstanceID: id, Deployment: rec.Deployment(id), Director: cmp.Or(rec.Director, first),
			ServiceID: rec.ServiceID, PlanID: rec.PlanID, From: rec.MaintenanceVersion}
		_, plan, ok := cat.Plan(rec.PlanID)
		switch {
		case !ok:
			if named[id] {
				sel.Settled = append(sel.Settled, withReason(c.result(report.UpgradeSkipped), "its plan is not in the catalog"))
			}
			continue
		case plan.MaintenanceInfo == nil:
			if named[id] {
				sel.Settled = append(sel.Settled, withReason(c.result(report.UpgradeSkipped), "its plan declares no maintenance_info: there is no version to upgrade to"))
			}
			continue
		}
		c.To = plan.MaintenanceInfo.Version
		if rec.MaintenanceVersion != "" && catalog.CompareVersions(rec.MaintenanceVersion, c.To) >= 0 {
			if named[id] {
				sel.Settled = append(sel.Settled, c.result(report.UpgradeCurrent))
			}
			continue
		}
		switch {
		case rec.Orphaned:
			sel.Settled = append(sel.Settled, withReason(c.result(report.UpgradeSkipped), "orphaned: its deployment is gone"))
		case rec.Adopted:
			sel.Settled = append(sel.Settled, withReason(c.result(report.UpgradeSkipped),
				"adopted from BOSH and not confirmed by an operator: confirm the adoption first"))
		case rec.Retiring != nil:
			sel.Settled = append(sel.Settled, withReason(c.result(report.UpgradeSkipped), "retiring: its VMs are stopped because the platform does not list it; it is upgraded once the platform lists it again"))
		case !named[id] && quarantined != nil && quarantined(id) != "":
			sel.Settled = append(sel.Settled, withReason(c.result(report.UpgradeSkipped), quarantined(id)))
		default:
			sel.Candidates = append(sel.Candidates, c)
		}
	}
	for id := range named {
		if index[id] == nil {
			sel.Settled = append(sel.Settled, report.UpgradeResult{InstanceID: id, State: report.UpgradeSkipped, Reason: "the index has no record of it"})
		}
	}
	slices.SortFunc(sel.Candidates, func(a, b Candidate) int {
		return cmp.Or(catalog.CompareVersions(a.From, b.From), strings.Compare(a.InstanceID, b.InstanceID))
	})
	slices.SortFunc(sel.Settled, func(a, b report.UpgradeResult) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	return sel
}

func withReason(r report.UpgradeResult, why string) report.UpgradeResult {
	r.Reason = why
	return r
}
