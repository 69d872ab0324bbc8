package healthloop

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// Director is one Director the loop asks.
type Director struct {
	// Name is its bosh.name, as handovers name it.
	Name string
	// Health reads a deployment's VM states (a vm-state task); nil: its
	// deployments are not asked about.
	Health interface {
		VMStates(ctx context.Context, name string, poll time.Duration) ([]bosh.VMState, error)
	}
	// Tasks lists its tasks; nil: no look at its queue before a task.
	Tasks interface {
		Tasks(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error)
	}
}

// Counters are the loop's metrics.
type Counters interface {
	// InFlight says how many vm-state tasks run on director.
	InFlight(director string, n int)
	// Checked counts a check of a deployment on director, answered or not.
	Checked(director string, ok bool)
	// HeldOff counts a task not started because the broker had one queued.
	HeldOff(director string)
	// Unhealthy says how many instances are unhealthy.
	Unhealthy(n int)
}

// Options are what a Loop is made of.
type Options struct {
	Directors []Director
	// Tracker carries the runs' handovers in and the document out.
	Tracker *health.Tracker
	// Store keeps the health document.
	Store memory.StateStore
	// Notifier hears of the transitions once written.
	Notifier ports.Notifier
	Counters Counters
	// Period is reconciler.health_sweep (0: no sweep, only what runs name);
	// Slot the length of a sweep slot (reconciler.interval).
	Period, Slot time.Duration
	// TasksAtOnce is reconciler.health.tasks_at_once.
	TasksAtOnce int
	// Poll is how often a vm-state task is polled; Tick how often the loop
	// looks whether a task may start.
	Poll, Tick time.Duration
	// Leading says whether the daemon leads.
	Leading func() bool
	Now     func() time.Time
	Log     *slog.Logger
}

const (
	// checkTimeout bounds one deployment's check.
	checkTimeout = 2 * time.Minute
	// maxRechecks bounds the unhealthy instances asked again per handover.
	maxRechecks = 50
	// pauseTicks is how many ticks a Director that failed to answer is left alone.
	pauseTicks = 30
	// flushTicks is how many ticks at most what was learnt waits to be
	// written while tasks still run.
	flushTicks = 10
	// queueLimit bounds the Director's queued tasks read before a task.
	queueLimit = 1000
	// ownContext marks the broker's own tasks (operations, redeploys, upgrades).
	ownContext = "blacksmith-"
)

// Loop is the health loop. Serve runs it; Status reads it from any
// goroutine.
type Loop struct {
	o      Options
	lanes  map[string]*lane
	order  []string // Director names, in the configuration's order
	keep   keeper
	gen    uint64 // the handover worked from
	handed health.Handover
	ticks  int    // since the last write
	steps  uint64 // ticks since the start

	mu     sync.Mutex
	status report.HealthLoopStatus
}

// New makes a Loop; it does no I/O.
func New(o Options) *Loop {
	o.TasksAtOnce = max(o.TasksAtOnce, 1)
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	l := &Loop{o: o, lanes: map[string]*lane{}}
	l.keep = keeper{o: &l.o}
	for _, d := range o.Directors {
		l.lanes[d.Name] = newLane(d)
		l.order = append(l.order, d.Name)
	}
	l.publish(false)
	return l
}

// result is what one check brought back.
type result struct {
	director, name string
	states         []bosh.VMState
	err            error
}

// Serve runs the loop until ctx ends.
func (l *Loop) Serve(ctx context.Context) error {
	ticker := time.NewTicker(l.o.Tick)
	defer ticker.Stop()
	results := make(chan result)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return nil
		case res := <-results:
			l.took(res)
		case <-ticker.C:
			l.step(ctx, results, &wg)
		}
	}
}

// step is one tick: while leading, the document read, the newest handover
// taken, the tasks each Director may start started, what was learnt
// written when nothing runs or it waited long enough.
func (l *Loop) step(ctx context.Context, results chan<- result, wg *sync.WaitGroup) {
	l.steps++
	leading := l.o.Leading == nil || l.o.Leading()
	if !leading {
		if l.keep.loaded { // a new leader reads the document again
			l.keep = keeper{o: &l.o}
			for name, ln := range l.lanes {
				l.lanes[name] = newLane(ln.dir)
			}
			l.gen = 0
		}
		l.publish(false)
		return
	}
	if !l.keep.loaded && !l.keep.load(ctx) {
		l.publish(true)
		return
	}
	if h, gen := l.o.Tracker.Handed(); gen != 0 && gen != l.gen {
		l.take(h, gen)
	}
	if l.gen == 0 {
		l.publish(true)
		return
	}
	now := l.o.Now()
	running := 0
	for _, name := range l.order {
		ln := l.lanes[name]
		l.startDue(ctx, ln, now, results, wg)
		running += len(ln.inFlight)
	}
	l.ticks++
	if l.keep.dirty && (running == 0 || l.ticks >= flushTicks) {
		l.ticks = 0
		l.keep.flush(ctx, l.pending(), now)
	}
	l.publish(true)
}

// take starts working from handover h: the entries of instances gone
// dropped, what each lane no longer has forgotten, the named, what was
// left for later, the pending and the unhealthy asked first.
func (l *Loop) take(h health.Handover, gen uint64) {
	l.gen, l.handed = gen, h
	l.keep.forget(h.Gone)
	handed := func(name string) bool { _, ok := h.Targets[name]; return ok }
	now := l.o.Now()
	var later []string
	for _, ln := range l.lanes {
		ln.forget(handed)
		later = append(later, ln.later...)
		ln.later = nil
		l.reslot(ln, now, true)
	}
	askFirst := func(name string) {
		if t, ok := h.Targets[name]; ok {
			if ln := l.lanes[t.Director]; ln != nil {
				ln.ask(name)
			}
		}
	}
	for _, name := range slices.Concat(h.Named, later) {
		askFirst(name)
	}
	for _, name := range l.keep.doc.Pending {
		askFirst(name)
	}
	rechecks := 0
	for _, e := range l.keep.doc.Sorted() {
		if t, ok := h.Targets[e.Deployment]; ok && t.Instance == e.InstanceID && rechecks < maxRechecks {
			askFirst(e.Deployment)
			rechecks++
		}
	}
}

// startDue starts the due checks of a lane its budget allows: none while
// the Director has a task of the broker's queued, none on a deployment a
// task holds (left for later).
func (l *Loop) startDue(ctx context.Context, ln *lane, now time.Time, results chan<- result, wg *sync.WaitGroup) {
	l.reslot(ln, now, false)
	if ln.dir.Health == nil || len(ln.inFlight) >= l.o.TasksAtOnce || now.Before(ln.pauseUntil) || !ln.due(now) {
		return
	}
	busy, ok := l.queue(ctx, ln)
	if !ok {
		return
	}
	for len(ln.inFlight) < l.o.TasksAtOnce {
		name, ok := ln.next(now)
		if !ok {
			return
		}
		if busy[name] {
			ln.later = append(ln.later, name)
			ln.stats.Busy++
			continue
		}
		ln.inFlight[name] = true
		ln.stats.Started++
		ln.stats.MostAtOnce = max(ln.stats.MostAtOnce, len(ln.inFlight))
		at := now.UTC()
		ln.stats.LastCheck = &at
		l.count(func(c Counters) { c.InFlight(ln.dir.Name, len(ln.inFlight)) })
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, checkTimeout)
			defer cancel()
			states, err := ln.dir.Health.VMStates(cctx, name, l.o.Poll)
			select {
			case results <- result{director: ln.dir.Name, name: name, states: states, err: err}:
			case <-ctx.Done():
			}
		})
	}
}

// reslot spreads a lane's sweep again when the slot changed or a new
// handover came (force).
func (l *Loop) reslot(ln *lane, now time.Time, force bool) {
	sweep := health.Sweep{Period: l.o.Period, Interval: l.o.Slot}
	slot := sweep.Slot(now)
	if slot == ln.slot && !force {
		return
	}
	end := time.Unix(0, (slot+1)*int64(l.o.Slot))
	if l.o.Slot <= 0 {
		end = now
	}
	ln.reslot(slot, sweep.Share(l.handed.Of(ln.dir.Name), slot), now, end)
}

// queue reads the Director's queued and running tasks: the deployments
// they hold, and false (held off) when one of them is the broker's and
// still queued, or the Director did not answer (the lane pauses).
func (l *Loop) queue(ctx context.Context, ln *lane) (map[string]bool, bool) {
	if ln.dir.Tasks == nil {
		return nil, true
	}
	tasks, err := ln.dir.Tasks.Tasks(ctx, bosh.TaskQuery{States: []string{bosh.TaskQueued, bosh.TaskProcessing}, Limit: queueLimit})
	if err != nil {
		if ctx.Err() == nil {
			l.o.Log.Warn("health checks paused: the Director's tasks could not be read", "director", ln.dir.Name, "error", err)
			ln.pauseUntil = l.o.Now().Add(pauseTicks * l.o.Tick)
		}
		return nil, false
	}
	busy := map[string]bool{}
	for _, t := range tasks {
		_, ours := l.handed.Targets[t.Deployment]
		if t.State == bosh.TaskQueued && (ours || strings.HasPrefix(t.ContextID, ownContext)) {
			ln.stats.HeldOff++
			l.count(func(c Counters) { c.HeldOff(ln.dir.Name) })
			return nil, false
		}
		busy[t.Deployment] = true
	}
	return busy, true
}

// took folds a check's answer in: an observation, or a deployment left
// for later (and the lane paused a while when the Director failed).
func (l *Loop) took(res result) {
	ln := l.lanes[res.director]
	delete(ln.inFlight, res.name)
	l.count(func(c Counters) { c.InFlight(ln.dir.Name, len(ln.inFlight)) })
	if !l.keep.loaded {
		// Asked before this daemon stopped leading: nothing is kept of it
		// (a leader again reads the document afresh).
		return
	}
	t, handed := l.handed.Targets[res.name]
	switch {
	case res.err != nil:
		ln.stats.Failed++
		l.count(func(c Counters) { c.Checked(ln.dir.Name, false) })
		if handed {
			ln.later = append(ln.later, res.name)
		}
		if !errors.Is(res.err, context.Canceled) {
			l.o.Log.Warn("VM states not read; the instance's health stays as it was", "deployment", res.name,
				"instance", t.Instance, "director", ln.dir.Name, "error", res.err)
			ln.pauseUntil = l.o.Now().Add(pauseTicks * l.o.Tick)
		}
	default:
		ln.stats.Checked++
		l.count(func(c Counters) { c.Checked(ln.dir.Name, true) })
		if handed {
			l.keep.observe(health.Observation{Deployment: res.name, Instance: t.Instance, VMs: health.Judge(res.states)}, ln.dir.Name)
		}
	}
	l.keep.dirty = true
	l.publish(true)
}

// pending is what every lane has yet to ask or left for later.
func (l *Loop) pending() []string {
	var lists [][]string
	for _, name := range l.order {
		lists = append(lists, l.lanes[name].pending())
	}
	return health.PendingOf(lists...)
}

func (l *Loop) count(f func(Counters)) {
	if l.o.Counters != nil {
		f(l.o.Counters)
	}
}

// publish updates what Status shows.
func (l *Loop) publish(leading bool) {
	_, newest := l.o.Tracker.Handed()
	st := report.HealthLoopStatus{Leading: leading, TasksAtOnce: l.o.TasksAtOnce, Idle: leading && l.gen != 0 && l.gen == newest && !l.keep.dirty, Ticks: l.steps,
		Directors: make([]report.HealthLoopDirector, 0, len(l.order))}
	if l.gen != 0 {
		at := l.handed.At.UTC()
		st.HandedAt = &at
	}
	now := l.o.Now()
	for _, name := range l.order {
		ln := l.lanes[name]
		ds := ln.stats
		ds.First, ds.Sweep, ds.InFlight = len(ln.first), len(ln.sweep), len(ln.inFlight)
		st.Directors = append(st.Directors, ds)
		if ds.InFlight > 0 || (ln.dir.Health != nil && ln.due(now) && !now.Before(ln.pauseUntil)) {
			st.Idle = false
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.status = st
}

// Status is what the loop is doing.
func (l *Loop) Status() report.HealthLoopStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.status
	st.Directors = append([]report.HealthLoopDirector(nil), st.Directors...)
	return st
}
