package records

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// PlanWriter is the dry run's writer: it writes nothing, and evaluates each
// index change against the index as read to add what the run would do to
// its Plan. It is safe for concurrent use.
type PlanWriter struct {
	Shared

	mu   sync.Mutex
	plan report.Plan
}

// NewPlanWriter is a dry run's writer.
func NewPlanWriter(s Shared) *PlanWriter { return &PlanWriter{Shared: s} }

// Write writes nothing: the index change that follows adds the instance to the plan.
func (w *PlanWriter) Write(context.Context, *Update) error { return nil }

// Close has nothing to write.
func (w *PlanWriter) Close() {}

// Queue evaluates the change against the index as read, counts what it
// would do and adds it to the plan.
func (w *PlanWriter) Queue(p *Queued) {
	next, _ := p.Change(w.Index[p.ID].Clone())
	e := *p.eff
	if next == nil {
		e = 0
	}
	account(w.Shared, p, e)
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case p.update != nil:
		w.addRecords(p.update, e)
		if e&memory.EffectUnorphaned != 0 {
			w.plan.Unorphans = append(w.plan.Unorphans, report.PlanOrphan{InstanceID: p.ID, Deployment: p.update.Deployment})
		}
	case e&memory.EffectOrphaned != 0:
		w.plan.Orphans = append(w.plan.Orphans, report.PlanOrphan{InstanceID: p.ID, Deployment: w.Index[p.ID].Deployment(p.ID)})
	}
}

// addRecords adds what a dry run would write for an instance to the plan;
// e is what its index change would do.
func (w *PlanWriter) addRecords(u *Update, e memory.Effect) {
	a := u.Actions
	item := report.PlanItem{InstanceID: u.Match.InstanceID, Deployment: u.Deployment, ServiceID: u.ServiceID,
		PlanID: u.PlanID, Strategy: u.Match.Strategy, Confidence: u.Match.Confidence, Drift: a.Drift}
	if e != 0 {
		item.Records = append(item.Records, report.RecordIndex)
	}
	if a.Metadata != nil {
		item.Records = append(item.Records, report.RecordMetadata)
	}
	if a.Manifest {
		item.Records = append(item.Records, report.RecordManifest)
	}
	if len(item.Records) == 0 {
		return
	}
	if a.Drift {
		w.Ledger.Count(func(s *report.Summary) {
			s.Drift++
			s.AddDrifted(report.Drifted{InstanceID: u.Match.InstanceID, Deployment: u.Deployment, Changed: a.Changed})
		})
	}
	if e&memory.EffectCreated != 0 {
		w.plan.Creates = append(w.plan.Creates, item)
	} else {
		w.plan.Updates = append(w.plan.Updates, item)
	}
	if a.Backup && w.Backups {
		w.plan.Backups = append(w.plan.Backups, item.InstanceID)
	}
}

// Plan is the plan so far, sorted, with empty lists rather than nil ones.
func (w *PlanWriter) Plan() *report.Plan {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.plan
	byItem := func(a, b report.PlanItem) int { return cmp.Compare(a.InstanceID, b.InstanceID) }
	byOrphan := func(a, b report.PlanOrphan) int { return cmp.Compare(a.InstanceID, b.InstanceID) }
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
