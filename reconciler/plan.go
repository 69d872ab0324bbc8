package reconciler

import (
	"cmp"
	"slices"
	"sync"
)

// Record kinds a plan item names.
const (
	recordIndex    = "index"
	recordMetadata = "metadata"
	recordManifest = "manifest"
)

// Plan is what a dry run would have done. Items are sorted by instance id.
type Plan struct {
	// Creates are instances that have no index record yet.
	Creates []PlanItem `json:"creates"`
	// Updates are instances whose records differ from what BOSH runs.
	Updates []PlanItem `json:"updates"`
	// Orphans are index records that would be flagged orphaned.
	Orphans []PlanOrphan `json:"orphans"`
	// Unorphans are orphaned index records whose deployment is back.
	Unorphans []PlanOrphan `json:"unorphans"`
	// Backups are the instances that would be backed up before their change.
	Backups []string `json:"backups"`
}

// PlanItem is one instance a dry run would write records for.
type PlanItem struct {
	// InstanceID is the service instance.
	InstanceID string `json:"instance_id"`
	// Deployment is its BOSH deployment.
	Deployment string `json:"deployment"`
	// ServiceID is the service the index record gets: the one the manifest's
	// properties.blacksmith names for the instance, else the matcher's.
	ServiceID string `json:"service_id"`
	// PlanID is the plan the index record gets, found as ServiceID is.
	PlanID string `json:"plan_id"`
	// Strategy is the matcher strategy that found the instance.
	Strategy Strategy `json:"strategy"`
	// Confidence is how sure the strategy is, from 0 to 1.
	Confidence float64 `json:"confidence"`
	// Records are the records that would be written: index, metadata, manifest.
	Records []string `json:"records"`
	// Drift says the manifest differs from the one recorded.
	Drift bool `json:"drift,omitempty"`
}

// PlanOrphan is an index record whose orphaned flag would change.
type PlanOrphan struct {
	// InstanceID is the service instance.
	InstanceID string `json:"instance_id"`
	// Deployment is the deployment that is missing (or back).
	Deployment string `json:"deployment"`
}

// planner collects a Plan from concurrent workers.
type planner struct {
	mu   sync.Mutex
	plan Plan
}

func (p *planner) add(item PlanItem, create, backup bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if create {
		p.plan.Creates = append(p.plan.Creates, item)
	} else {
		p.plan.Updates = append(p.plan.Updates, item)
	}
	if backup {
		p.plan.Backups = append(p.plan.Backups, item.InstanceID)
	}
}

func (p *planner) orphan(o PlanOrphan, flag bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if flag {
		p.plan.Orphans = append(p.plan.Orphans, o)
	} else {
		p.plan.Unorphans = append(p.plan.Unorphans, o)
	}
}

// result returns the plan, sorted, with empty lists rather than nil ones.
func (p *planner) result() *Plan {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.plan
	byItem := func(a, b PlanItem) int { return cmp.Compare(a.InstanceID, b.InstanceID) }
	byOrphan := func(a, b PlanOrphan) int { return cmp.Compare(a.InstanceID, b.InstanceID) }
	out.Creates = sorted(out.Creates, byItem)
	out.Updates = sorted(out.Updates, byItem)
	out.Orphans = sorted(out.Orphans, byOrphan)
	out.Unorphans = sorted(out.Unorphans, byOrphan)
	out.Backups = sorted(out.Backups, cmp.Compare[string])
	return &out
}

// empty says the plan would change nothing.
func (p *Plan) empty() bool {
	return len(p.Creates)+len(p.Updates)+len(p.Orphans)+len(p.Unorphans) == 0
}

func sorted[T any](s []T, f func(a, b T) int) []T {
	s = slices.Clone(s)
	if s == nil {
		s = []T{}
	}
	slices.SortFunc(s, f)
	return s
}
