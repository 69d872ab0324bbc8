package reconciler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// NamedDirector is one more Director when several are reconciled.
type NamedDirector struct {
	// Name is its bosh.name: index records and the Summary name it.
	Name string
	// Director lists its deployments and fetches their manifests and VMs.
	Director Director
	// Tasks finds its tasks in flight; nil: no task check.
	Tasks Tasks
	// Deployer deploys on it (rollback, remediation); nil: no redeploy of its instances.
	Deployer Deployer
}

// member is one Director of a fleet.
type member struct {
	name  string
	d     Director
	tasks Tasks // nil: no task check
}

// fleet is several Directors seen as one by a run: it lists them all at
// once and sends each deployment's requests to the Director that listed
// it. A Director that cannot be listed leaves the others' run going: the
// instances that live on it are unknown for the run, never orphaned. A
// fleet lives as long as its run.
type fleet struct {
	members []member
	retry   retrier

	mu     sync.Mutex
	owner  map[string]int // deployment -> member, from the run's listing
	down   map[string]error
	counts map[string]int // deployments listed, by Director
	dups   []string       // deployments listed by two Directors (the first keeps them)
	listed bool           // Deployments ran to its end
}

// newFleet is a run's fleet over members (each already behind its breaker).
func newFleet(members []member, rt retrier) *fleet {
	return &fleet{members: members, retry: rt, owner: map[string]int{}, down: map[string]error{}, counts: map[string]int{}}
}

// Deployments lists every Director at once, each with the run's retries; a
// deployment carries the name of its Director. It fails only when no
// Director could be listed.
func (f *fleet) Deployments(ctx context.Context) ([]bosh.Deployment, error) {
	lists := make([][]bosh.Deployment, len(f.members))
	errs := make([]error, len(f.members))
	var wg sync.WaitGroup
	for i, m := range f.members {
		wg.Go(func() {
			errs[i] = f.retry.do(ctx, "director", m.name, func(ctx context.Context) (err error) {
				lists[i], err = m.d.Deployments(ctx)
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
			err := fmt.Errorf("Director %s could not be listed: %w", m.name, errs[i])
			f.down[m.name] = err
			failed = append(failed, err)
			continue
		}
		for _, d := range lists[i] {
			if _, taken := f.owner[d.Name]; taken {
				f.dups = append(f.dups, fmt.Sprintf("deployment %s is listed by Directors %s and %s; only %s's is reconciled",
					d.Name, f.members[f.owner[d.Name]].name, m.name, f.members[f.owner[d.Name]].name))
				continue
			}
			d.Director = m.name
			f.owner[d.Name] = i
			f.counts[m.name]++
			out = append(out, d)
		}
	}
	if len(failed) == len(f.members) {
		return nil, retry.Terminal(errors.Join(failed...)) // each was retried already
	}
	return out, nil
}

// tripper is what the breaker of Director name does when it opens: that
// Director is out of the run (its requests fail at once, quietly: its
// deployments are neither failed nor quarantined, its instances unknown)
// and the others go on.
func (f *fleet) tripper(name string) context.CancelCauseFunc {
	return func(cause error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.down[name] == nil {
			f.down[name] = fmt.Errorf("Director %s failed during the run: %w", name, cause)
		}
	}
}

// of is the Director that listed deployment name (the first when none did).
func (f *fleet) of(name string) member {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.members[f.owner[name]]
}

func (f *fleet) Manifest(ctx context.Context, name string) (string, error) {
	return f.of(name).d.Manifest(ctx, name)
}

func (f *fleet) VMs(ctx context.Context, name string) ([]bosh.VM, error) {
	return f.of(name).d.VMs(ctx, name)
}

// errNoMergedFeed: the Directors' event logs cannot be read as one.
var errNoMergedFeed = errors.New("several Directors have no common event feed: read each Director's (watchFleet)")

// Events is refused: each Director's feed is read on its own (watchFleet).
func (f *fleet) Events(context.Context, bosh.EventQuery) ([]bosh.Event, error) {
	return nil, errNoMergedFeed
}

// Tasks asks every Director that was listed and has a task check (the
// orphaner asks which deployments have a task in flight).
func (f *fleet) Tasks(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error) {
	var out []bosh.Task
	for _, m := range f.members {
		if m.tasks == nil || f.isDown(m.name) {
			continue
		}
		tasks, err := m.tasks.Tasks(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("Director %s: %w", m.name, err)
		}
		out = append(out, tasks...)
	}
	return out, nil
}

func (f *fleet) isDown(name string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.down[name] != nil
}

// unknown says whether the run cannot tell if rec's deployment exists: its
// Director could not be listed, or is not configured (any more), or, for a
// record written before it named its Director, some Director could not be
// listed. Such a record is never flagged orphaned.
func (f *fleet) unknown(rec *vault.Record) bool {
	if f == nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if rec.Director == "" {
		return len(f.down) > 0
	}
	for _, m := range f.members {
		if m.name == rec.Director {
			return f.down[m.name] != nil
		}
	}
	return true
}

// reports are the Directors as the run saw them, in configuration order;
// nil when the listing was cut short (it says nothing of them).
func (f *fleet) reports(feeds map[string]*watch) []DirectorReport {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.listed {
		return nil
	}
	out := make([]DirectorReport, 0, len(f.members))
	for _, m := range f.members {
		r := DirectorReport{Name: m.name, Listed: f.down[m.name] == nil, Deployments: f.counts[m.name]}
		if err := f.down[m.name]; err != nil {
			r.Error = truncate(err.Error(), 1024)
		}
		if w := feeds[m.name]; w != nil {
			rep := w.report
			r.Feed = &rep
		}
		out = append(out, r)
	}
	return out
}

// watchFleet reads every Director's event feed, each from its own mark.
// The run watches (trusts what no event named) unless every Director
// resyncs; the deployments of a Director that resyncs, or whose feed
// could not be read, are dealt with once listed (applyFeeds).
func (r *run) watchFleet(ctx context.Context) {
	cfg := r.parts.cfg
	members := r.parts.fleet.members
	read := make([]*watch, len(members))
	var wg sync.WaitGroup
	for i, m := range members { // at once: a Director that does not answer holds up no other
		wg.Go(func() {
			read[i] = readWatch(ctx, r.parts.store, m.d, feedStateOf(m.name), r.start, cfg.ResyncPeriod, r.opts.Force)
		})
	}
	wg.Wait()
	r.feeds = map[string]*watch{}
	merged := &watch{named: map[string]bool{}}
	resyncs := 0
	var reasons []string
	for i, m := range members {
		w := read[i]
		r.feeds[m.name] = w
		for name := range w.named {
			merged.named[name] = true
		}
		merged.report.Pages += w.report.Pages
		merged.report.Events += w.report.Events
		if w.report.Mode == FeedResync {
			resyncs++
		}
		if w.report.Mode != FeedWatch {
			reasons = append(reasons, fmt.Sprintf("Director %s: %s (%s)", m.name, w.report.Mode, w.report.Reason))
		}
	}
	merged.report.Changed = len(merged.named)
	merged.report.Mode = FeedWatch
	if resyncs == len(members) {
		merged.report.Mode = FeedResync
	}
	merged.report.Reason = strings.Join(reasons, "; ")
	r.watch = merged
}

// applyFeeds deals with the listed deployments of the Directors that
// resync (their copies are dropped: fetched again) or whose feed could not
// be read (their copies go by cache_ttl), when the run as a whole watches.
func (r *run) applyFeeds(deps []bosh.Deployment) {
	if r.feeds == nil || r.watch.report.Mode != FeedWatch {
		return
	}
	r.fallback = map[string]bool{}
	for _, d := range deps {
		w := r.feeds[d.Director]
		if w == nil {
			continue
		}
		switch w.report.Mode {
		case FeedResync:
			r.parts.scanner.forget(d.Name)
			r.watch.named[d.Name] = true
		case FeedFallback:
			r.fallback[d.Name] = true
			r.watch.named[d.Name] = true // no index record vouches for it
		}
	}
}

// saveFeeds keeps each feed's mark for the next run: one Director's as
// before, each of several Directors' in its own document, except for a
// Director that could not be listed (the changes its events name were not
// dealt with).
func (r *run) saveFeeds(ctx context.Context) {
	save := func(w *watch) {
		if err := w.save(ctx, r.parts.store, r.parts.now(), r.pendingNames(w)); err != nil {
			r.log.Warn("could not keep the event feed's mark; the next run reads the same events again", "error", err)
		}
	}
	if r.feeds == nil {
		save(r.watch)
		return
	}
	for _, m := range r.parts.fleet.members {
		if !r.parts.fleet.isDown(m.name) {
			save(r.feeds[m.name])
		}
	}
}

// reportFleet records what the run saw of several Directors: each one
// that could not be listed is an error of the run, as is a deployment
// listed by two.
func (r *run) reportFleet() {
	f := r.parts.fleet
	if f == nil {
		return
	}
	f.mu.Lock()
	var errs []error
	for _, m := range f.members {
		if err := f.down[m.name]; err != nil {
			errs = append(errs, fmt.Errorf("%w; the instances that live on it are unknown this run (none is flagged orphaned)", err))
		}
	}
	for _, d := range f.dups {
		errs = append(errs, errors.New(d))
	}
	f.mu.Unlock()
	for _, err := range errs {
		r.state.fail("", err)
	}
}

// deployerOf is the Deployer of the Director rec's deployment lives on (the
// first when rec names none); nil when that Director has none or is not
// configured.
func (p runParts) deployerOf(rec *vault.Record) Deployer {
	if rec == nil {
		return p.deployers[""]
	}
	return p.deployers[rec.Director]
}

// listAll lists the deployments of every Director, outside a run; with
// several Directors it fails when one cannot be listed (its deployments
// would look gone).
func (p runParts) listAll(ctx context.Context) ([]bosh.Deployment, error) {
	if len(p.more) == 0 {
		return p.director.Deployments(ctx)
	}
	members := append([]member{{name: p.first, d: p.director, tasks: p.tasks}}, p.more...)
	f := newFleet(members, retrier{})
	deps, err := f.Deployments(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range members {
		if err := f.down[m.name]; err != nil {
			return nil, err
		}
	}
	return deps, nil
}

// owned is the name of the Director that listed deployment name; "" when none did.
func (f *fleet) owned(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i, ok := f.owner[name]; ok {
		return f.members[i].name
	}
	return ""
}

// onUnlistedDirector says whether a quarantine key (deployment or instance)
// may belong to a Director this run could not list: such an item was not
// looked at, and it stays as it is (not released as gone).
func (r *run) onUnlistedDirector(key string) bool {
	f := r.parts.fleet
	if f == nil {
		return false
	}
	f.mu.Lock()
	down := len(f.down) > 0
	f.mu.Unlock()
	if !down {
		return false
	}
	kind, name, _ := strings.Cut(key, " ")
	if kind == "deployment" {
		return !r.listed[name] || f.isDown(f.owned(name))
	}
	rec := r.index[name]
	return rec == nil || f.unknown(rec)
}

// unknown says whether the run cannot tell if rec's deployment exists
// (never flagged orphaned, never remediated): with several Directors, see
// fleet.unknown; with one, a record that names another Director (removed
// from bosh, or renamed) is unknown.
func (r *run) unknown(rec *vault.Record) bool {
	if f := r.parts.fleet; f != nil {
		return f.unknown(rec)
	}
	return rec.Director != "" && rec.Director != r.parts.first
}
