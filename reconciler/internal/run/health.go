package run

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
)

const (
	// maxRechecks bounds the unhealthy instances a run asks about again.
	maxRechecks = 50
	// maxNamed bounds the deployments a run asks about beyond its share of
	// the sweep (named by events, pending from the last run); the rest
	// waits for the next run.
	maxNamed = 200
	// healthCheckTimeout bounds one deployment's check: a task the
	// Director never runs must not hold the run.
	healthCheckTimeout = 2 * time.Minute
)

// checkHealth asks the Directors for the VM states of the run's share of
// the sweep, of the deployments instance, VM or alert events named (and
// those the last run could not ask), and of the instances unhealthy so far
// (to see them recover); it folds the answers into the health document,
// writes it, and only then tells the webhooks of the transitions. A dry
// or scoped run does not; a deployment a task holds or whose instance's
// operation is in progress is left for later; a deployment whose states
// cannot be read keeps its instance as it was and is asked again next run.
func checkHealth(ctx context.Context, r *run) {
	if r.opts.DryRun || !r.opts.Scope.Empty() || r.p.Health == nil || ctx.Err() != nil {
		return
	}
	var read health.Doc
	if _, err := r.vault.Memory.ReadState(ctx, health.DocName, &read); err != nil {
		r.log.Warn("health not checked: the health document could not be read", "error", err)
		return
	}
	hf := fleet.HealthOf(r.fleet)
	doc := read.Forget(func(id string) bool {
		e := read.Unhealthy[id]
		rec := r.index[id]
		return rec != nil && rec.Retiring == nil && // a retiring instance's VMs are stopped on purpose
			(r.listed[e.Deployment] || !hf.AllListed()) // a deployment gone takes its entry
	})
	rep := report.HealthReport{}
	due, later := planHealth(r, doc, &rep)
	obs, failed := askHealth(ctx, r, hf, due, &rep)
	if ctx.Err() != nil {
		return // stopped: the next run asks again, nothing half told
	}
	next, transitions := health.Apply(doc, obs, r.p.Now().UTC())
	next.Pending = pending(later, failed)
	if !next.Equal(read) {
		if err := r.vault.Memory.WriteState(ctx, health.DocName, next); err != nil {
			r.log.Warn("the health document could not be written; its transitions are told at a next run", "error", err)
			return
		}
	}
	r.p.Health.Set(next)
	for _, t := range transitions {
		announce(r, t, &rep)
	}
	rep.Unhealthy = len(next.Unhealthy)
	r.ledger.Count(func(s *report.Summary) { s.Health = &rep })
}

// planHealth chooses the deployments a run asks (by deployment, their
// instance) and those left for the next run: the sweep's share, then the
// deployments named or pending (at most maxNamed), then the unhealthy
// instances (at most maxRechecks). A deployment a task holds or whose
// instance's operation is in progress is left for the next run.
func planHealth(r *run, doc health.Doc, rep *report.HealthReport) (due map[string]string, later []string) {
	sweep := health.Sweep{Period: r.p.Config.HealthSweep, Interval: r.p.Config.Interval}
	rep.Slot, rep.Slots = sweep.Slot(r.start), sweep.Slots()
	due = map[string]string{}
	add := func(name string) bool { // false: not a listed deployment of a known instance, or busy
		id, ok := r.byDep[name]
		if !ok || !r.listed[name] || r.index[id].Retiring != nil { // a retiring instance's VMs are stopped on purpose
			return false
		}
		if rec := r.index[id]; r.locked[name] || (rec != nil && rec.OperationInProgress()) {
			later = append(later, name)
			return false
		}
		due[name] = id
		return true
	}
	if r.p.Health.TakeSlot(rep.Slot) {
		var known []string
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
	named := 0
	for _, name := range slices.Concat(r.view.HealthNamed(), doc.Pending) {
		if _, ok := due[name]; ok {
			rep.Named++
			continue
		}
		if named >= maxNamed {
			later = append(later, name)
			continue
		}
		if add(name) {
			named++
			rep.Named++
		}
	}
	rechecks := 0
	for _, e := range doc.Sorted() {
		if _, ok := due[e.Deployment]; !ok && rechecks < maxRechecks && add(e.Deployment) {
			rechecks++
		}
	}
	return due, later
}

// askHealth reads the VM states of the due deployments, twice
// Config.MaxConcurrency at a time (each mostly waits for its task), each
// within healthCheckTimeout; it returns what was read and the deployments
// that could not be.
func askHealth(ctx context.Context, r *run, hf fleet.Healths, due map[string]string, rep *report.HealthReport) ([]health.Observation, []string) {
	var (
		mu     sync.Mutex
		out    []health.Observation
		failed []string
		wg     sync.WaitGroup
	)
	began := time.Now()
	slots := make(chan struct{}, max(1, 2*r.p.Config.MaxConcurrency))
	for name, id := range due {
		if ctx.Err() != nil {
			break
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			cctx, cancel := context.WithTimeout(ctx, healthCheckTimeout)
			defer cancel()
			states, err := hf.VMStates(cctx, name, r.p.HealthPoll)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, fleet.ErrNoHealth): // the Director is out of the run, or not asked
			case err != nil:
				rep.Checked++
				rep.Failed++
				failed = append(failed, name)
				if ctx.Err() == nil {
					r.log.Warn("VM states not read; the instance's health stays as it was", "deployment", name, "instance", id, "error", err)
				}
			default:
				rep.Checked++
				out = append(out, health.Observation{Deployment: name, Instance: id, VMs: health.Judge(states)})
			}
		})
	}
	wg.Wait()
	rep.Seconds = time.Since(began).Seconds()
	return out, failed
}

// pending is what the next run asks whatever its share, at most
// health.MaxPending deployments, each once.
func pending(lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	size := 0
	for _, name := range slices.Concat(lists...) {
		if len(out) < health.MaxPending && !seen[name] && size+health.PendingBytes(name) <= health.MaxPendingBytes {
			seen[name] = true
			size += health.PendingBytes(name)
			out = append(out, name)
		}
	}
	slices.Sort(out)
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
