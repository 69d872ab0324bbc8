package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Fleet is the Directors as one run sees them: it lists them all at once
// and sends each deployment's requests to the Director that listed it. A
// Director that cannot be listed, or whose breaker opens, is out of the run
// (its requests fail at once, quietly) and the others go on: the instances
// that live on it are unknown for the run, never orphaned. A Fleet lives as
// long as its run; it is safe for concurrent use.
type Fleet struct {
	members roster
	policy  memory.Policy
	stop    context.CancelCauseFunc // once no Director is left
	feeds   *Feeds

	mu     sync.Mutex
	owner  map[string]int // deployment -> member, from the run's listing
	down   map[int]error
	counts map[int]int // deployments listed, by member
	dups   []string    // deployments listed by two Directors (the first keeps them)
	listed bool        // List ran to its end
}

// roster is the Directors of a run, in configuration order.
type roster []runMember

// runMember is a Director in a run: behind its breaker.
type runMember struct {
	member
	breaker *guard.Breaker
}

func newFleet(members []member, p memory.Policy, stop context.CancelCauseFunc) *Fleet {
	f := &Fleet{policy: p, stop: stop, owner: map[string]int{}, down: map[int]error{}, counts: map[int]int{}}
	for _, m := range members {
		f.members = append(f.members, runMember{member: m})
	}
	f.feeds = &Feeds{fleet: f, of: make([]*watch, len(members)), trusted: make([]int, len(members))}
	return f
}

// List lists every Director at once, each with the run's retries; a
// deployment carries the name of its Director as index records keep it
// (none with a single Director). It returns every Director's listing, a
// name listed by two Directors twice: Choose keeps one per name. It fails
// when no Director could be listed.
func (f *Fleet) List(ctx context.Context) ([]bosh.Deployment, error) {
	lists := make([][]bosh.Deployment, len(f.members))
	errs := make([]error, len(f.members))
	var wg sync.WaitGroup
	for i, m := range f.members {
		wg.Go(func() {
			errs[i] = f.policy.Do(ctx, "director", m.Name, func(ctx context.Context) (err error) {
				lists[i], err = guard.Call(m.breaker, ctx, m.Director.Deployments)
				return err
			})
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil { // cut short (the index read failed, the run stopped): no Director's fault
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listed = true
	var out []bosh.Deployment
	var failed []error
	for i, m := range f.members {
		if errs[i] != nil {
			err := m.failed("could not be listed", errs[i])
			f.down[i] = err
			failed = append(failed, err)
			continue
		}
		for _, d := range lists[i] {
			d.Director = m.recorded
			out = append(out, d)
		}
	}
	if len(failed) == len(f.members) {
		return nil, retry.Terminal(errors.Join(failed...)) // each was retried already; one Director's error as it is
	}
	return out, nil
}

// Owners says which owned record names a deployment: the instance and the
// Director the record names ("" for the first); ok false when no owned
// record names it.
type Owners func(deployment string) (id, director string, ok bool)

// Choose keeps one deployment per name, in listing order, and says which
// Director owns each: the one its owned record names. The same name on
// another Director, or on any Director when the owner's does not list it,
// claims what it does not own: a conflict, never reconciled (the owner's
// deployment, when its Director does not list it, is gone). A name no
// owned record names goes to the first Director that lists it; the others
// are errors of the run. owners nil: the first lister keeps every name.
func (f *Fleet) Choose(all []bosh.Deployment, owners Owners) ([]bosh.Deployment, []report.Conflict) {
	f.mu.Lock()
	defer f.mu.Unlock()
	first := make(map[string]int, len(all)) // the first member that lists each name
	for _, d := range all {
		if _, ok := first[d.Name]; !ok {
			first[d.Name] = f.members.memberOf(d.Director)
		}
	}
	out := make([]bosh.Deployment, 0, len(all))
	var conflicts []report.Conflict
	for _, d := range all {
		i := f.members.memberOf(d.Director)
		keeper := first[d.Name]
		if owners != nil {
			if id, director, ok := owners(d.Name); ok {
				keeper = f.members.recordedMember(director)
				if i != keeper {
					conflicts = append(conflicts, report.Conflict{InstanceID: id, Winner: d.Name, Loser: d.Name,
						LoserDirector: f.members[i].Name})
					continue
				}
			}
		}
		if i != keeper {
			f.dups = append(f.dups, fmt.Sprintf("deployment %s is listed by Directors %s and %s; only %s's is reconciled",
				d.Name, f.members[keeper].Name, f.members[i].Name, f.members[keeper].Name))
			continue
		}
		f.owner[d.Name] = i
		f.counts[i]++
		out = append(out, d)
	}
	return out, conflicts
}

// memberOf is the member whose records name it recorded (the label
// deployments carry).
func (r roster) memberOf(recorded string) int {
	for i, m := range r {
		if m.recorded == recorded {
			return i
		}
	}
	return 0
}

// recordedMember is the member a record naming director lives on: the
// first for "", -1 for a Director not configured.
func (r roster) recordedMember(director string) int {
	if director == "" {
		return 0
	}
	for i, m := range r {
		if m.recorded == director || m.Name == director {
			return i
		}
	}
	return -1
}

// tripper is what the breaker of member i does when it opens: that
// Director is out of the run (its deployments are neither failed nor
// quarantined, its instances unknown) and the others go on; once none is
// left, the run stops with the cause.
func (f *Fleet) tripper(i int) context.CancelCauseFunc {
	return func(cause error) {
		f.mu.Lock()
		if f.down[i] == nil {
			f.down[i] = f.members[i].failed("failed during the run", cause)
		}
		none := len(f.down) == len(f.members)
		f.mu.Unlock()
		if none {
			f.stop(cause)
		}
	}
}

// Manifest fetches a deployment's manifest from the Director that listed it.
func (f *Fleet) Manifest(ctx context.Context, name string) (string, error) {
	i, _ := f.ownerIndex(name) // the first when none listed it
	m := f.members[i]
	return guard.Call(m.breaker, ctx, func(ctx context.Context) (string, error) { return m.Director.Manifest(ctx, name) })
}

// VMs lists a deployment's VMs on the Director that listed it.
func (f *Fleet) VMs(ctx context.Context, name string) ([]bosh.VM, error) {
	i, _ := f.ownerIndex(name) // the first when none listed it
	m := f.members[i]
	return guard.Call(m.breaker, ctx, func(ctx context.Context) ([]bosh.VM, error) { return m.Director.VMs(ctx, name) })
}

// ErrNoHealth is VMStates's error for a Director whose health is not
// checked.
var ErrNoHealth = errors.New("the Director's VM states are not read")

// Healths reads VM states for a run, from the Director that listed each
// deployment, behind its breaker.
type Healths struct{ f *Fleet }

// HealthOf is the run's reader of VM states.
func HealthOf(f *Fleet) Healths { return Healths{f} }

// VMStates reads a deployment's VM states from the Director that listed
// it, when that Director is still in the run. A failure does not count
// against its breaker: a vm-state task that fails says little of the
// Director's API, and a health check must not end the run.
func (h Healths) VMStates(ctx context.Context, name string, poll time.Duration) ([]bosh.VMState, error) {
	f := h.f
	i, _ := f.ownerIndex(name)
	m := f.members[i]
	if m.Health == nil || f.isDown(i) {
		return nil, ErrNoHealth
	}
	return m.Health.VMStates(ctx, name, poll)
}

// AllListed says whether every Director listed its deployments this run
// (a deployment none lists is then gone).
func (h Healths) AllListed() bool {
	for i := range h.f.members {
		if h.f.isDown(i) {
			return false
		}
	}
	return true
}

// Tasks asks every Director that is not out of the run and has a task
// check (the orphaner asks which deployments have a task in flight).
func (f *Fleet) Tasks(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error) {
	var out []bosh.Task
	for i, m := range f.members {
		if m.Tasks == nil || f.isDown(i) {
			continue
		}
		tasks, err := guard.Call(m.breaker, ctx, func(ctx context.Context) ([]bosh.Task, error) { return m.Tasks.Tasks(ctx, q) })
		if err != nil {
			return nil, m.failed("", err)
		}
		out = append(out, tasks...)
	}
	return out, nil
}

func (f *Fleet) isDown(i int) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.down[i] != nil
}

// Feeds are the run's view of the Directors' event feeds.
func (f *Fleet) Feeds() *Feeds { return f.feeds }

func (f *Fleet) ownerIndex(name string) (int, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i, ok := f.owner[name]
	return i, ok
}

// Owner is the name of the Director that listed deployment name; "" when none did.
func (f *Fleet) Owner(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i, ok := f.owner[name]; ok {
		return f.members[i].Name
	}
	return ""
}

// Unknown says whether the run cannot tell if rec's deployment exists: its
// Director is out of the run, or is not configured (any more), or, for a
// record that names no Director, some Director is out of the run. Such a
// record is never flagged orphaned.
func (f *Fleet) Unknown(rec *vault.Record) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rec.Director == "" {
		return len(f.down) > 0
	}
	for i, m := range f.members {
		if m.Name == rec.Director {
			return f.down[i] != nil
		}
	}
	return true
}

// MayHold says whether a deployment, or an instance (its index record, nil
// when it has none), may belong to a Director that is out of the run: such
// an item was not looked at. Nothing may while every Director is in.
func (f *Fleet) MayHold(deployment string, rec *vault.Record, isInstance bool) bool {
	f.mu.Lock()
	if len(f.down) == 0 {
		f.mu.Unlock()
		return false
	}
	i, listed := f.owner[deployment]
	down := f.down[i] != nil
	f.mu.Unlock()
	if isInstance {
		return rec == nil || f.Unknown(rec)
	}
	return !listed || down
}

// Reports are the Directors as the run saw them, in configuration order;
// nil when the listing was cut short (it says nothing of them).
func (f *Fleet) Reports() []report.DirectorReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.listed {
		return nil
	}
	out := make([]report.DirectorReport, 0, len(f.members))
	for i, m := range f.members {
		r := report.DirectorReport{Name: m.Name, Listed: f.down[i] == nil, Deployments: f.counts[i]}
		if err := f.down[i]; err != nil {
			r.Error = report.Truncate(err.Error(), memory.MaxErrorText)
		}
		r.Feed = f.feeds.report(i)
		out = append(out, r)
	}
	return out
}

// Errors are the run's errors of the Directors: each one out of the run
// (its instances are unknown) and each deployment listed by two, unless
// every Director is out (the run stopped, and its own error says why).
func (f *Fleet) Errors() []error {
	var errs []error
	for _, err := range f.downErrors() {
		errs = append(errs, fmt.Errorf("%w; the instances that live on it are unknown this run (none is flagged orphaned)", err))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.down) == len(f.members) {
		errs = nil
	}
	for _, d := range f.dups {
		errs = append(errs, errors.New(d))
	}
	return errs
}

// downErrors are the Directors out of the run, in configuration order.
func (f *Fleet) downErrors() []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var errs []error
	for i := range f.members {
		if err := f.down[i]; err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}
