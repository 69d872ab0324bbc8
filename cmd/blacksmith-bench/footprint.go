package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The footprint scenario runs the daemon's reconciler as serve runs it
// (Start: a run at start, the interval, the watch between runs; the health
// loop beside it), every default on, over the deployments the scenarios
// before it recorded, for -footprint-window of wall time, and measures what
// it costs each Director it shares with every other tenant: the health
// loop's vm-state tasks per hour and at once, how long a deploy of the
// broker's made meanwhile waits in the Director's queue, and how long an
// out-of-band deploy and an agent that stops answering take to reach Vault
// and the health state. The reconciler's clock runs -footprint-speed times
// faster than the wall, so that a window holds that many windows of the
// sweep's pace (the watch and the loop's ticks keep wall time): 6 by
// default; a Director of 25,000 deployments (bench-scale) asks a task
// every 3.5 s, which at 6 times is more than one task at a time does with
// the daemon's 0.5 s polls, so bench-scale runs it at 2.
const (
	// footprintDeploys is one broker deploy per Director every this often.
	footprintDeploys = 4 * time.Second
	// footprintChange is when, into the window, the out-of-band changes are made.
	footprintChange = 5 * time.Second
)

// footprintFigures are the footprint scenario's own figures.
type footprintFigures struct {
	WindowS float64 `json:"window_s"`
	Speed   int     `json:"clock_speed"`
	// SweepTasksPerHour and MostSweepTasksAtOnce are per Director (the
	// health loop's vm-state tasks, by the reconciler's clock).
	SweepTasksPerHour    []float64 `json:"sweep_tasks_per_hour"`
	MostSweepTasksAtOnce []int     `json:"most_sweep_tasks_at_once"`
	// MostTasksAtOnce is the most tasks of any kind at once on a Director.
	MostTasksAtOnce []int `json:"most_tasks_at_once"`
	// BrokerDeploys were made during the sweep; their queue wait (created
	// to processing) in milliseconds.
	BrokerDeploys    int     `json:"broker_deploys"`
	QueueWaitP50MS   float64 `json:"queue_wait_p50_ms"`
	QueueWaitP99MS   float64 `json:"queue_wait_p99_ms"`
	WatchRuns        int     `json:"watch_runs"`
	OutOfBandS       float64 `json:"out_of_band_recorded_s"` // -1: not within the window
	UnresponsiveS    float64 `json:"unresponsive_unhealthy_s"`
	HealthHeldOff    int     `json:"health_held_off"`
	HealthLoopChecks int     `json:"health_loop_checks"`
}

// fastClock is a clock speed times faster than the wall from base.
type fastClock struct {
	base, start time.Time
	speed       int
}

func (c fastClock) now() time.Time { return c.base.Add(time.Since(c.start) * time.Duration(c.speed)) }

// footprint runs the footprint scenario over the n deployments of sims
// recorded in store, on a reconciler of its own.
func (b *bench) footprint(ctx context.Context, n int, sims []*simProcess, store *vault.Store, c *clock) (result, error) {
	b.log.Info("footprint: the reconciler as serve runs it, every default on", "deployments", n, "window", b.f.footprintWindow)
	r := result{Scenario: fmt.Sprintf("footprint-%d", n), Deployments: n, Directors: len(sims)}
	if len(sims) > 1 {
		r.Scenario += fmt.Sprintf("-%ddirectors", len(sims))
	}
	fast := fastClock{base: c.now().Truncate(time.Hour).Add(time.Hour), start: time.Now(), speed: b.f.footprintSpeed} // at a slot's start: its share spread over the whole slot
	m, _, err := b.manager(sims, store, fast.now)
	if err != nil {
		return r, err
	}
	for _, s := range sims {
		if err := s.setEventsKept(ctx, sim.DefaultEventsKept); err != nil { // the gap scenario kept 10
			return r, err
		}
		if err := s.reset(ctx); err != nil {
			return r, err
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for _, p := range m.Loops().All() { // every loop, as the daemon serves them
		wg.Go(func() { _ = p.Serve(runCtx) })
	}
	for m.Status().LastRun == nil { // the run at start hands the loop the fleet
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	first := m.Status().LastRun.RunID
	began := time.Now()
	deploys, err := brokerDeploys(runCtx, sims, began.Add(b.f.footprintWindow))
	if err != nil {
		return r, err
	}
	ff := &footprintFigures{WindowS: b.f.footprintWindow.Seconds(), Speed: b.f.footprintSpeed, OutOfBandS: -1, UnresponsiveS: -1}
	changes := outOfBand(runCtx, b, sims[0], store, m, began, ff)
	select {
	case <-ctx.Done():
		return r, ctx.Err()
	case <-time.After(time.Until(began.Add(b.f.footprintWindow))):
	}
	stop()
	wg.Wait()
	if err := errors.Join(<-deploys, <-changes); err != nil {
		return r, err
	}
	if err := ff.fromTasks(ctx, sims, first, m); err != nil {
		return r, err
	}
	r.footprintFigures = ff
	r.judgeFootprint()
	return r, nil
}

// brokerDeploys deploys, on each Director, one of its deployments again as
// the broker does (a context id of its own) every footprintDeploys until
// end; the channel gets the first error once done.
func brokerDeploys(ctx context.Context, sims []*simProcess, end time.Time) (<-chan error, error) {
	type target struct {
		c        *bosh.Client
		manifest []byte
	}
	var targets []target
	for i, s := range sims {
		var listing []struct {
			Name string `json:"name"`
		}
		if err := s.director(ctx, "/deployments?exclude_configs=true&exclude_releases=true&exclude_stemcells=true", &listing); err != nil {
			return nil, err
		}
		if len(listing) == 0 {
			continue
		}
		text, err := s.manifest(ctx, listing[len(listing)/2].Name)
		if err != nil {
			return nil, err
		}
		c, err := bosh.New(bosh.Options{Name: fmt.Sprintf("broker-%d", i), Address: s.url, Username: "admin", Password: "admin"})
		if err != nil {
			return nil, err
		}
		targets = append(targets, target{c, []byte(text)})
	}
	out := make(chan error, 1)
	go func() {
		tick := time.NewTicker(footprintDeploys)
		defer tick.Stop()
		for i := 0; time.Now().Before(end.Add(-footprintDeploys)); i++ {
			for _, t := range targets {
				if _, err := t.c.Deploy(bosh.WithContextID(ctx, fmt.Sprintf("blacksmith-bench-%d", i)), t.manifest); err != nil && ctx.Err() == nil {
					out <- fmt.Errorf("a broker deploy: %w", err)
					return
				}
			}
			select {
			case <-ctx.Done():
				out <- nil
				return
			case <-tick.C:
			}
		}
		out <- nil
	}()
	return out, nil
}

// outOfBand makes, footprintChange into the window, an operator's bosh
// deploy that changes a deployment and an agent that stops answering on
// another, both on the first Director, and times each until Vault has the
// change and the health state the instance unhealthy; the channel gets the
// first error once done.
func outOfBand(ctx context.Context, b *bench, s *simProcess, store *vault.Store, m *reconciler.Manager, began time.Time, ff *footprintFigures) <-chan error {
	out := make(chan error, 1)
	go func() {
		out <- func() error {
			var listing []struct {
				Name string `json:"name"`
			}
			if err := s.director(ctx, "/deployments?exclude_configs=true&exclude_releases=true&exclude_stemcells=true", &listing); err != nil {
				return err
			}
			if len(listing) < 2 {
				return nil
			}
			changed, sick := listing[0].Name, listing[1].Name
			text, err := s.manifest(ctx, changed)
			if err != nil {
				return err
			}
			var vms []struct {
				ID string `json:"id"`
			}
			if err := s.director(ctx, "/deployments/"+sick+"/vms", &vms); err != nil || len(vms) == 0 {
				return fmt.Errorf("the VMs of %s: %w", sick, err)
			}
			c, err := bosh.New(bosh.Options{Name: "operator", Address: s.url, Username: "admin", Password: "admin"})
			if err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(time.Until(began.Add(footprintChange))):
			}
			at := time.Now()
			// a key of its own: the scenarios before may have added tags
			task, err := c.Deploy(ctx, []byte(strings.TrimRight(text, "\n")+"\nfootprint_change:\n  footprint: out-of-band\n"))
			if err == nil {
				task, err = c.WaitTask(ctx, task.ID, 100*time.Millisecond)
			}
			if err == nil && task.State != bosh.TaskDone {
				err = fmt.Errorf("its task ended %s: %s", task.State, task.Result)
			}
			if err != nil {
				return fmt.Errorf("the out-of-band deploy: %w", err)
			}
			body := fmt.Sprintf(`{"deployment":%q,"instance":%q,"agent":%q}`, sick, vms[0].ID, sim.AgentUnresponsive)
			if err := s.admin(ctx, "POST", "/_sim/agent", body, nil); err != nil {
				return err
			}
			id := instanceOf(sick)
			for ctx.Err() == nil && (ff.OutOfBandS < 0 || ff.UnresponsiveS < 0) {
				if ff.OutOfBandS < 0 {
					if stored, _, err := store.Manifest(ctx, instanceOf(changed)); err == nil && strings.Contains(stored, "footprint: out-of-band") {
						ff.OutOfBandS = time.Since(at).Seconds()
					}
				}
				if ff.UnresponsiveS < 0 && slices.ContainsFunc(m.Status().Health.Instances, func(u report.UnhealthyInstance) bool { return u.InstanceID == id }) {
					ff.UnresponsiveS = time.Since(at).Seconds()
				}
				select {
				case <-ctx.Done():
				case <-time.After(250 * time.Millisecond):
				}
			}
			return nil
		}()
	}()
	return out
}

// instanceOf is the instance id of a seeded deployment: its name ends with it.
func instanceOf(deployment string) string {
	const uuidLen = 36
	return deployment[max(0, len(deployment)-uuidLen):]
}

// fromTasks reads what each Director's task log says of the window.
func (ff *footprintFigures) fromTasks(ctx context.Context, sims []*simProcess, first string, m *reconciler.Manager) error {
	var waits []time.Duration
	for _, s := range sims {
		log, err := s.taskLog(ctx)
		if err != nil {
			return err
		}
		var sweep []sim.TaskEntry
		for _, t := range log {
			switch {
			case t.Description == "retrieve vm-stats":
				sweep = append(sweep, t)
			case strings.HasPrefix(t.ContextID, "blacksmith-bench-") && !t.Began.IsZero():
				ff.BrokerDeploys++
				waits = append(waits, t.Began.Sub(t.Created))
			}
		}
		hours := ff.WindowS / 3600 * float64(ff.Speed)
		ff.SweepTasksPerHour = append(ff.SweepTasksPerHour, float64(len(sweep))/hours)
		ff.MostSweepTasksAtOnce = append(ff.MostSweepTasksAtOnce, sim.MaxOverlap(sweep))
		ff.MostTasksAtOnce = append(ff.MostTasksAtOnce, sim.MaxOverlap(log))
	}
	slices.Sort(waits)
	ff.QueueWaitP50MS, ff.QueueWaitP99MS = percentileMS(waits, 0.50), percentileMS(waits, 0.99)
	for _, d := range m.Health().Status().Directors {
		ff.HealthHeldOff += d.HeldOff
		ff.HealthLoopChecks += d.Started
	}
	runs, err := m.Runs(ctx, 0)
	if err != nil {
		return err
	}
	for _, s := range runs {
		if s.RunID != first && strings.HasPrefix(s.Reason, "watch: ") {
			ff.WatchRuns++
		}
	}
	return nil
}

// percentileMS is the p-th percentile of sorted waits, in milliseconds (0: none).
func percentileMS(sorted []time.Duration, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(len(sorted)-1, int(p*float64(len(sorted))))
	return float64(sorted[i]) / float64(time.Millisecond)
}

// judgeFootprint says whether the footprint met the targets.
func (r *result) judgeFootprint() {
	ff := r.footprintFigures
	r.Target = "the health loop's vm-state tasks at most 1 at a time per Director, a broker deploy's queue wait p99 under 1 s, " +
		"an out-of-band deploy in Vault and an unresponsive agent in the health state within 90 s"
	// The counts: the broker deployed, both changes seen, one task at a time.
	r.CountsMet = ff.BrokerDeploys > 0 && ff.OutOfBandS >= 0 && ff.UnresponsiveS >= 0
	for _, most := range ff.MostSweepTasksAtOnce {
		r.CountsMet = r.CountsMet && most <= 1
	}
	r.TargetMet = r.CountsMet && ff.QueueWaitP99MS < 1000 && ff.OutOfBandS <= 90 && ff.UnresponsiveS <= 90
	r.WallS = ff.WindowS
}
