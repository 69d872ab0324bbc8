package run

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
)

// maxRechecks bounds the unhealthy instances a run asks about again on top
// of its share of the sweep and of those the feed named.
const maxRechecks = 50

// checkHealth asks the Directors for the VM states of the run's share of
// the sweep, of the deployments instance or VM events named, and of the
// instances unhealthy so far (to see them recover); it folds the answers
// into the health document, notifies each transition and writes the
// document when an entry changed. A dry run or a scoped run does not; a
// deployment whose states cannot be read keeps its instance as it was.
func checkHealth(ctx context.Context, r *run) {
	if r.opts.DryRun || !r.opts.Scope.Empty() || r.p.Health == nil {
		return
	}
	var doc health.Doc
	if _, err := r.vault.Memory.ReadState(ctx, health.DocName, &doc); err != nil {
		r.log.Warn("health not checked: the health document could not be read", "error", err)
		return
	}
	doc = doc.Forget(func(id string) bool { return r.index[id] != nil })
	sweep := health.Sweep{Period: r.p.Config.HealthSweep, Interval: r.p.Config.Interval}
	rep := report.HealthReport{Slot: sweep.Slot(r.start), Slots: sweep.Slots()}
	due := map[string]string{}      // deployment -> instance id
	add := func(name string) bool { // false: not a listed deployment of a known instance
		id, ok := r.byDep[name]
		if !ok || !r.listed[name] {
			return false
		}
		due[name] = id
		return true
	}
	if r.p.Health.TakeSlot(rep.Slot) {
		var known []string // the listed deployments of known instances
		for name := range r.listed {
			if _, ok := r.byDep[name]; ok {
				known = append(known, name)
			}
		}
		for _, name := range sweep.Share(known, rep.Slot) {
			if add(name) {
				rep.Swept++
			}
		}
	}
	for _, name := range r.view.HealthNamed() {
		if add(name) {
			rep.Named++
		}
	}
	rechecks := 0
	for _, e := range doc.Sorted() {
		if _, ok := due[e.Deployment]; !ok && rechecks < maxRechecks && add(e.Deployment) {
			rechecks++
		}
	}
	began := time.Now()
	obs := askHealth(ctx, r, due, &rep)
	rep.Seconds = time.Since(began).Seconds()
	next, transitions := health.Apply(doc, obs, r.p.Now().UTC())
	for _, t := range transitions {
		announce(r, t, &rep)
	}
	if !next.Equal(doc) {
		if err := r.vault.Memory.WriteState(ctx, health.DocName, next); err != nil {
			r.log.Warn("the health document could not be written; the next run sees the transitions again", "error", err)
		}
	}
	r.p.Health.Set(next)
	rep.Unhealthy = len(next.Unhealthy)
	r.ledger.Count(func(s *report.Summary) { s.Health = &rep })
}

// askHealth reads the VM states of the due deployments, twice
// Config.MaxConcurrency at a time (each mostly waits for its task).
func askHealth(ctx context.Context, r *run, due map[string]string, rep *report.HealthReport) []health.Observation {
	var (
		mu  sync.Mutex
		out []health.Observation
		wg  sync.WaitGroup
	)
	slots := make(chan struct{}, max(1, 2*r.p.Config.MaxConcurrency))
	for name, id := range due {
		if ctx.Err() != nil {
			break
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			states, err := fleet.HealthOf(r.fleet).VMStates(ctx, name, r.p.HealthPoll)
			mu.Lock()
			defer mu.Unlock()
			rep.Checked++
			if err != nil {
				if !errors.Is(err, fleet.ErrNoHealth) {
					rep.Failed++
					r.log.Warn("VM states not read; the instance's health stays as it was", "deployment", name, "instance", id, "error", err)
				}
				return
			}
			out = append(out, health.Observation{Deployment: name, Instance: id, VMs: health.Judge(states)})
		})
	}
	wg.Wait()
	return out
}

// announce logs a transition and tells the notifier.
func announce(r *run, t health.Transition, rep *report.HealthReport) {
	e := t.Entry
	typ, reason := notify.Recovered, "every VM running again"
	if t.Unhealthy {
		typ, reason = notify.Unhealthy, e.Reason()
		rep.BecameUnhealthy++
		r.log.Warn("instance unhealthy", "instance", e.InstanceID, "deployment", e.Deployment, "reason", reason)
	} else {
		rep.Recovered++
		r.log.Info("instance recovered", "instance", e.InstanceID, "deployment", e.Deployment, "unhealthy_since", e.Since)
	}
	r.hist.Notify(notify.Event{Type: typ, InstanceID: e.InstanceID, Deployment: e.Deployment,
		Director: r.directorOf(e.InstanceID, e.Deployment), Reason: reason, RunID: r.id, Time: e.CheckedAt})
}
