package upgrade

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Live is a fleet upgrade's report as it is made; safe for concurrent use.
type Live struct {
	mu  sync.Mutex
	rep report.UpgradeReport
	// observe hears every change of an instance's state.
	observe func(prev string, next report.UpgradeResult)
}

// NewLive starts the report of a fleet upgrade; observe (nil: nobody) hears
// each change of an instance's state.
func NewLive(rep report.UpgradeReport, observe func(prev string, next report.UpgradeResult)) *Live {
	rep.Running, rep.Counts = true, map[string]int{}
	return &Live{rep: rep, observe: observe}
}

// Snapshot is a copy of the report now.
func (l *Live) Snapshot() report.UpgradeReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.rep
	r.Counts = map[string]int{}
	for _, i := range slices.Concat(r.Resumed, r.Instances) {
		r.Counts[i.State]++
	}
	r.Resumed, r.Instances = slices.Clone(r.Resumed), slices.Clone(r.Instances)
	if r.Instances == nil {
		r.Instances = []report.UpgradeResult{}
	}
	return r
}

func (l *Live) update(f func(*report.UpgradeReport)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(&l.rep)
}

// set changes one instance's result (list: &rep.Instances or &rep.Resumed).
func (l *Live) set(list func(*report.UpgradeReport) []report.UpgradeResult, i int, r report.UpgradeResult) {
	l.mu.Lock()
	rs := list(&l.rep)
	prev := rs[i].State
	rs[i] = r
	l.mu.Unlock()
	if l.observe != nil && prev != r.State {
		l.observe(prev, r)
	}
}

// Fleet makes one fleet upgrade.
type Fleet struct {
	Upgrader *Upgrader
	Journal  *Journal
	// Index reads the index of records.
	Index   func(ctx context.Context) (map[string]*vault.Record, error)
	Catalog *catalog.Catalog
	// First is the name of the Director a record naming none lives on.
	First string
	// Gate says why no upgrade may start now (nil: none).
	Gate func() string
	Log  *slog.Logger
}

// Run makes the fleet upgrade live describes (its Rules, Scope, DryRun):
// the upgrades cut short before are finished first, then the instances in
// scope are selected from the index and rolled under the rules.
func (f Fleet) Run(ctx context.Context, live *Live) {
	defer live.update(func(r *report.UpgradeReport) { r.Running, r.EndedAt = false, f.Upgrader.Now() })
	rep := live.Snapshot()
	if err := f.Journal.Load(ctx); err != nil {
		live.update(func(r *report.UpgradeReport) { r.Error = err.Error() })
		return
	}
	if !rep.DryRun {
		f.resume(ctx, live, rep.Rules)
	}
	index, err := f.Index(ctx)
	if err != nil {
		live.update(func(r *report.UpgradeReport) { r.Error = "reading the index: " + err.Error() })
		return
	}
	if problems := catalog.VersionProblems(f.Catalog, func(yield func(id, planID, version string) bool) {
		for id, rec := range index {
			if rec != nil && !yield(id, rec.PlanID, rec.MaintenanceVersion) {
				return
			}
		}
	}); len(problems) > 0 {
		var msgs []string
		for _, p := range problems {
			msgs = append(msgs, p.String())
		}
		live.update(func(r *report.UpgradeReport) { r.Error = "the catalog: " + strings.Join(msgs, "; ") })
		return
	}
	now := f.Upgrader.Now()
	sel := Select(index, f.Catalog, rep.Scope, f.First, func(id string) string { return f.Journal.Held(id, now) })
	offset := len(sel.Settled)
	live.update(func(r *report.UpgradeReport) {
		r.Instances = append(slices.Clone(sel.Settled), make([]report.UpgradeResult, len(sel.Candidates))...)
		for i, c := range sel.Candidates {
			r.Instances[offset+i] = c.result(report.UpgradePending)
		}
	})
	f.Log.Info("fleet upgrade started", "fleet", rep.ID, "trigger", rep.Trigger, "dry_run", rep.DryRun,
		"candidates", len(sel.Candidates), "set_aside", len(sel.Settled))
	instances := func(r *report.UpgradeReport) []report.UpgradeResult { return r.Instances }
	_, stopped := Roll{Rules: rep.Rules, Attempt: f.Upgrader.One, Gate: f.Gate,
		Progress: func(i int, r report.UpgradeResult) { live.set(instances, offset+i, r) }}.Run(ctx, sel.Candidates)
	live.update(func(r *report.UpgradeReport) {
		r.Stopped = stopped
		for i := range r.Instances {
			if r.Instances[i].State == report.UpgradePending && stopped != "" {
				r.Instances[i].Reason = stopped
			}
		}
	})
	end := live.Snapshot()
	f.Log.Info("fleet upgrade ended", "fleet", rep.ID, "counts", end.Counts, "stopped", stopped)
}

// resume finishes the upgrades the journal holds, MaxInFlight at a time.
func (f Fleet) resume(ctx context.Context, live *Live, rules report.UpgradeRules) {
	entries := f.Journal.InFlight()
	if len(entries) == 0 {
		return
	}
	live.update(func(r *report.UpgradeReport) {
		for _, e := range entries {
			r.Resumed = append(r.Resumed, report.UpgradeResult{InstanceID: e.InstanceID, Deployment: e.Deployment, PlanID: e.PlanID,
				From: e.From, To: e.To, State: report.UpgradePending})
		}
	})
	resumed := func(r *report.UpgradeReport) []report.UpgradeResult { return r.Resumed }
	sem := make(chan struct{}, max(rules.MaxInFlight, 1))
	var wg sync.WaitGroup
	for i, e := range entries {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			live.set(resumed, i, report.UpgradeResult{InstanceID: e.InstanceID, Deployment: e.Deployment, PlanID: e.PlanID,
				From: e.From, To: e.To, State: report.UpgradeInFlight})
			live.set(resumed, i, f.Upgrader.Resume(ctx, e))
		})
	}
	wg.Wait()
}
