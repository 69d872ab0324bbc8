package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// upgradeCatalog is the simulator's seed plans at maintenance_info
// upgradeVersion, each with its new manifest template.
func upgradeCatalog() (*catalog.Catalog, error) {
	cat := seedCatalog()
	for si := range cat.Services {
		for pi := range cat.Services[si].Plans {
			p := &cat.Services[si].Plans[pi]
			sp, ok := seedPlan(p.ID)
			if !ok {
				return nil, fmt.Errorf("plan %s is none of the simulator's seed plans", p.ID)
			}
			tpl, err := catalog.ParseTemplate(p.ID+"/manifest.yml", fmt.Sprintf(upgradeTemplate, sp.Release, sp.Version, sp.Instances))
			if err != nil {
				return nil, err
			}
			p.Manifest = tpl
			p.MaintenanceInfo = &catalog.MaintenanceInfo{Version: upgradeVersion, Description: "stemcell 1.507"}
		}
	}
	return cat, nil
}

func seedPlan(id string) (sim.SeedPlan, bool) {
	for _, p := range sim.DefaultSeedPlans() {
		if p.PlanID == id {
			return p, true
		}
	}
	return sim.SeedPlan{}, false
}

// timing is where an upgraded instance's time went, on average.
func (u *upgradeFigures) timing(rep report.UpgradeReport, log []sim.TaskEntry) {
	tasks := map[int]sim.TaskEntry{}
	for _, t := range log {
		tasks[t.ID] = t
	}
	var pre, task, post time.Duration
	k := 0
	for _, i := range rep.Instances {
		t, ok := tasks[i.TaskID]
		if i.State != report.UpgradeUpgraded || !ok || t.Began.IsZero() || t.Ended.IsZero() {
			continue
		}
		pre, task, post = pre+t.Began.Sub(i.StartedAt), task+t.Ended.Sub(t.Began), post+i.EndedAt.Sub(t.Ended)
		k++
	}
	if k > 0 {
		ms := func(d time.Duration) float64 { return float64(d) / float64(k) / float64(time.Millisecond) }
		u.PreTaskMS, u.TaskMS, u.PostTaskMS = ms(pre), ms(task), ms(post)
	}
	byStart := slices.SortedFunc(slices.Values(log), func(a, b sim.TaskEntry) int { return a.Began.Compare(b.Began) })
	u.CanaryFirst = len(byStart) < 2 || (!byStart[0].Ended.IsZero() && byStart[0].Ended.Before(byStart[1].Began))
	if len(byStart) > 0 {
		for _, i := range rep.Instances {
			if i.Canary && i.TaskID != byStart[0].ID {
				u.CanaryFirst = false // the first task is not the canary's
			}
		}
	}
}

// check compares what each instance ended as with what it should have: an
// instance made to fail rolled back (state rolled_back, a second "create
// deployment" task that ended done, the Director running the manifest of
// before, Vault recording it), any other upgraded (the Director running
// and Vault recording the new rendering, the record at the new version);
// none with its operation in progress, none running a third manifest.
func (u *upgradeFigures) check(ctx context.Context, s *simProcess, store *vault.Store, rep report.UpgradeReport,
	log []sim.TaskEntry, before map[string]*vault.Record, old, rendered map[string]string, faulty map[string]bool) error {
	idx, err := store.Index(ctx)
	if err != nil {
		return err
	}
	results := map[string]report.UpgradeResult{}
	for _, i := range rep.Instances {
		results[i.InstanceID] = i
	}
	tasks := map[string][]sim.TaskEntry{}
	for _, t := range log {
		tasks[t.Deployment] = append(tasks[t.Deployment], t)
	}
	problem := func(id, format string, args ...any) {
		u.ProblemCount++
		if len(u.Problems) < maxProblems {
			u.Problems = append(u.Problems, id+": "+fmt.Sprintf(format, args...))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(before)) {
		name := before[id].Deployment(id)
		rec := idx.Records[id]
		runs, err := s.manifest(ctx, name)
		if err != nil {
			return err
		}
		recorded, _, err := store.Manifest(ctx, id)
		if err != nil {
			return err
		}
		half := rec.OperationInProgress() || (runs != old[id] && runs != rendered[id])
		if rec.OperationInProgress() {
			u.InProgress++
			problem(id, "its last operation is in progress: %s", rec.LastOperation.Description)
		}
		if half {
			u.HalfState++
		}
		if recorded != runs {
			problem(id, "Vault records another manifest than the Director runs")
		}
		res, ts := results[id], tasks[name]
		if faulty[id] {
			switch {
			case res.State != report.UpgradeRolledBack:
				problem(id, "made to fail: %s, not rolled_back (%s)", res.State, res.Reason)
			case len(ts) != 2 || ts[0].State != "error" || ts[1].Description != "create deployment" || ts[1].State != "done":
				problem(id, "made to fail: its tasks are not a failed deploy and a rollback deploy that ended done: %+v", ts)
			case runs != old[id]:
				problem(id, "rolled back, but the Director does not run the manifest of before")
			case rec.MaintenanceVersion != before[id].MaintenanceVersion:
				problem(id, "rolled back, but its record's version is %q", rec.MaintenanceVersion)
			}
			continue
		}
		switch {
		case res.State != report.UpgradeUpgraded:
			problem(id, "%s, not upgraded (%s)", res.State, res.Reason)
		case len(ts) != 1 || ts[0].State != "done":
			problem(id, "upgraded, but its tasks are not one deploy that ended done: %+v", ts)
		case runs != rendered[id]:
			problem(id, "upgraded, but the Director does not run the new rendering")
		case rec.MaintenanceVersion != upgradeVersion:
			problem(id, "upgraded, but its record's version is %q", rec.MaintenanceVersion)
		}
	}
	if extra := len(rep.Instances) - len(before); extra != 0 {
		problem("report", "%d instances in the report for %d records", len(rep.Instances), len(before))
	}
	return nil
}
