package reconciler

import (
	"cmp"
	"slices"
	"sync"
)

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

func sorted[T any](s []T, f func(a, b T) int) []T {
	s = slices.Clone(s)
	if s == nil {
		s = []T{}
	}
	slices.SortFunc(s, f)
	return s
}
