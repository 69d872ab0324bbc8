package upgrade

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Triggers of a fleet upgrade.
const (
	ByOperator   = "operator"   // POST /b/upgrades
	ByBackground = "background" // reconciler.upgrades.mode auto
	ByCommand    = "command"    // blacksmith upgrade-all
)

// Report is one fleet upgrade: what it was asked, and what it did to each
// instance in scope.
type Report struct {
	ID      string `json:"id"`
	Trigger string `json:"trigger"`
	DryRun  bool   `json:"dry_run"`
	Rules   Rules  `json:"rules"`
	Scope   Scope  `json:"scope"`
	// Allow are the classes of guarded change the operator allowed for
	// this fleet upgrade (operation.Guarded); each instance's history
	// records the changes they let through.
	Allow     []string  `json:"allow,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	Running   bool      `json:"running"`
	// Stopped says why no more upgrades were started before the end of the
	// list (a canary failed, max_failures, the window closed, stopping).
	Stopped string `json:"stopped,omitempty"`
	// Error says why the fleet upgrade could not start (the index or the
	// journal could not be read).
	Error string `json:"error,omitempty"`
	// Counts are the instances by state.
	Counts map[string]int `json:"counts"`
	// Resumed are the upgrades cut short before, finished first.
	Resumed []Result `json:"resumed,omitempty"`
	// Instances are the instances in scope: those set aside first (by
	// id), then the candidates in the order they are tried.
	Instances []Result `json:"instances"`
}

// Done says the fleet upgrade could start and every instance in its scope
// is at its plan's version at its end (a dry run: would be). The upgrades
// it finished first (Resumed) count through their instance's place in
// scope, if any.
func (r Report) Done() bool {
	if r.Error != "" {
		return false
	}
	for _, i := range r.Instances {
		if !AtVersion(i.State) && !(r.DryRun && (i.State == WouldUpgrade || i.State == WouldRecord)) {
			return false
		}
	}
	return true
}

// Live is a fleet upgrade's report as it is made; safe for concurrent use.
type Live struct {
	mu  sync.Mutex
	rep Report
	// observe hears every change of an instance's state.
	observe func(prev string, next Result)
}

// NewLive starts the report of a fleet upgrade; observe (nil: nobody) hears
// each change of an instance's state.
func NewLive(rep Report, observe func(prev string, next Result)) *Live {
	rep.Running, rep.Counts = true, map[string]int{}
	return &Live{rep: rep, observe: observe}
}

// Snapshot is a copy of the report now.
func (l *Live) Snapshot() Report {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := l.rep
	r.Counts = map[string]int{}
	for _, i := range slices.Concat(r.Resumed, r.Instances) {
		r.Counts[i.State]++
	}
	r.Resumed, r.Instances = slices.Clone(r.Resumed), slices.Clone(r.Instances)
	if r.Instances == nil {
		r.Instances = []Result{}
	}
	return r
}

func (l *Live) update(f func(*Report)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f(&l.rep)
}

// set changes one instance's result (list: &rep.Instances or &rep.Resumed).
func (l *Live) set(list func(*Report) []Result, i int, r Result) {
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
	defer live.update(func(r *Report) { r.Running, r.EndedAt = false, f.Upgrader.Now() })
	rep := live.Snapshot()
	if err := f.Journal.Load(ctx); err != nil {
		live.update(func(r *Report) { r.Error = err.Error() })
		return
	}
	if !rep.DryRun {
		f.resume(ctx, live, rep.Rules)
	}
	index, err := f.Index(ctx)
	if err != nil {
		live.update(func(r *Report) { r.Error = "reading the index: " + err.Error() })
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
		live.update(func(r *Report) { r.Error = "the catalog: " + strings.Join(msgs, "; ") })
		return
	}
	now := f.Upgrader.Now()
	sel := Select(index, f.Catalog, rep.Scope, f.First, func(id string) string { return f.Journal.Held(id, now) })
	offset := len(sel.Settled)
	live.update(func(r *Report) {
		r.Instances = append(slices.Clone(sel.Settled), make([]Result, len(sel.Candidates))...)
		for i, c := range sel.Candidates {
			r.Instances[offset+i] = c.result(Pending)
		}
	})
	f.Log.Info("fleet upgrade started", "fleet", rep.ID, "trigger", rep.Trigger, "dry_run", rep.DryRun,
		"candidates", len(sel.Candidates), "set_aside", len(sel.Settled))
	instances := func(r *Report) []Result { return r.Instances }
	_, stopped := Roll{Rules: rep.Rules, Attempt: f.Upgrader.One, Gate: f.Gate,
		Progress: func(i int, r Result) { live.set(instances, offset+i, r) }}.Run(ctx, sel.Candidates)
	live.update(func(r *Report) {
		r.Stopped = stopped
		for i := range r.Instances {
			if r.Instances[i].State == Pending && stopped != "" {
				r.Instances[i].Reason = stopped
			}
		}
	})
	end := live.Snapshot()
	f.Log.Info("fleet upgrade ended", "fleet", rep.ID, "counts", end.Counts, "stopped", stopped)
}

// resume finishes the upgrades the journal holds, MaxInFlight at a time.
func (f Fleet) resume(ctx context.Context, live *Live, rules Rules) {
	entries := f.Journal.InFlight()
	if len(entries) == 0 {
		return
	}
	live.update(func(r *Report) {
		for _, e := range entries {
			r.Resumed = append(r.Resumed, Result{InstanceID: e.InstanceID, Deployment: e.Deployment, PlanID: e.PlanID,
				From: e.From, To: e.To, State: Pending})
		}
	})
	resumed := func(r *Report) []Result { return r.Resumed }
	sem := make(chan struct{}, max(rules.MaxInFlight, 1))
	var wg sync.WaitGroup
	for i, e := range entries {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			live.set(resumed, i, Result{InstanceID: e.InstanceID, Deployment: e.Deployment, PlanID: e.PlanID,
				From: e.From, To: e.To, State: InFlight})
			live.set(resumed, i, f.Upgrader.Resume(ctx, e))
		})
	}
	wg.Wait()
}
