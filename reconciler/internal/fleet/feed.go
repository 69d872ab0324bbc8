package fleet

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// maxFeedPages bounds the event pages one run reads of a Director (200
// events each): a longer feed is treated as a gap, and the run resyncs.
const maxFeedPages = 50

// watch is a run's view of one Director's event feed: which deployments
// changed since the last run, and whether the rest may be trusted.
type watch struct {
	report report.FeedReport
	named  map[string]bool // deployments the events since the last run name
	health map[string]bool // deployments instance-, VM- or alert events name
	state  feedState       // as read at the start of the run
	loaded bool            // the state was read (false: nothing is written back)
	doc    string          // the state document
	// taskMark is the task feed's new mark, seenTask the newest task read
	// (tasksRead: the task feed was read).
	taskMark, seenTask int
	tasksRead          bool
}

// Feeds are a run's view of every Director's event feed, and the one they
// make together. It is safe for concurrent use once read.
type Feeds struct {
	fleet   *Fleet
	of      []*watch // by member
	merged  *watch
	mu      sync.Mutex
	trusted []int // deployments each Director's feed vouched for without a fetch
}

// View is the run's reading of the event feeds: which deployments changed
// since the last run and how far the rest may be trusted.
type View struct {
	// Report is the feeds together (a single Director's: its own).
	Report report.FeedReport
	named  map[string]bool
	health map[string]bool
}

// HealthNamed are the deployments whose instances or VMs the feeds say
// changed (recreated, stopped, resurrected, an agent that stopped
// answering): their VMs' states are asked again.
func (v *View) HealthNamed() []string {
	return slices.Sorted(maps.Keys(v.health))
}

// Trusts says whether the feeds vouch that deployment name did not change
// since the last run.
func (v *View) Trusts(name string) bool {
	return v.Report.Mode == report.FeedWatch && !v.named[name]
}

// Named are the deployments the feeds named (in watch mode the run drops
// their cached copies).
func (v *View) Named() []string {
	out := make([]string, 0, len(v.named))
	for name := range v.named {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Read reads every Director's event feed at once (one that does not answer
// holds up no other), each from its own mark in store; forced says the run
// fetches everything anyway (the feeds are still read, to move the marks).
func (fd *Feeds) Read(ctx context.Context, store memory.StateStore, start time.Time, resync time.Duration, forced bool) *View {
	var wg sync.WaitGroup
	names := make([]string, len(fd.fleet.members))
	for i, m := range fd.fleet.members {
		names[i] = m.Name
		wg.Go(func() {
			events := func(ctx context.Context, q bosh.EventQuery) ([]bosh.Event, error) {
				return guard.Call(m.breaker, ctx, func(ctx context.Context) ([]bosh.Event, error) { return m.Director.Events(ctx, q) })
			}
			var tasks taskList
			if m.Tasks != nil {
				tasks = func(ctx context.Context, q bosh.TaskQuery) ([]bosh.Task, error) {
					return guard.Call(m.breaker, ctx, func(ctx context.Context) ([]bosh.Task, error) { return m.Tasks.Tasks(ctx, q) })
				}
			}
			fd.of[i] = readWatch(ctx, store, events, tasks, m.feedDoc, start, resync, forced)
			if w := fd.of[i]; w.report.NoEvents && !w.state.NoEvents {
				fd.fleet.policy.Log.Warn("the Director records no events (director.events.record_events is false): its deployments "+
					"are watched through its tasks, and Health Monitor alerts never arrive", "director", m.Name)
			}
		})
	}
	wg.Wait()
	fd.merged = merge(fd.of, names)
	return &View{Report: fd.merged.report, named: fd.merged.named, health: fd.merged.health}
}

// merge is the Directors' feeds as one: the deployments any named, resync
// when every Director resyncs and watch otherwise (each Director that
// resyncs or falls back has its deployments dealt with by Apply), the pages
// and events of all, and the reasons of those that do not watch. A single
// Director's feed is the run's as it is.
func merge(of []*watch, names []string) *watch {
	if len(of) == 1 {
		return of[0]
	}
	m := &watch{named: map[string]bool{}, health: map[string]bool{}}
	var reasons []string
	resyncs := 0
	for i, w := range of {
		for name := range w.named {
			m.named[name] = true
		}
		for name := range w.health {
			m.health[name] = true
		}
		m.report.Pages += w.report.Pages
		m.report.Events += w.report.Events
		m.report.Tasks += w.report.Tasks
		m.report.NoEvents = m.report.NoEvents || w.report.NoEvents
		if w.report.Mode != report.FeedWatch {
			reasons = append(reasons, fmt.Sprintf("Director %s: %s (%s)", names[i], w.report.Mode, w.report.Reason))
		}
		if w.report.Mode == report.FeedResync {
			resyncs++
		}
	}
	m.report.Mode = report.FeedWatch
	if resyncs == len(of) {
		m.report.Mode = report.FeedResync
	}
	m.report.Changed = len(m.named)
	m.report.Reason = strings.Join(reasons, "; ")
	return m
}

// Apply deals with the listed deployments of the Directors that resync
// (their copies are dropped from cache: fetched again) or whose feed could
// not be read (their copies go by cache_ttl: returned), when the run as a
// whole watches. Each is named in v: no index record vouches for it.
func (fd *Feeds) Apply(v *View, deps []bosh.Deployment, cache *Cache) (fallback map[string]bool) {
	if v.Report.Mode != report.FeedWatch {
		return nil
	}
	fallback = map[string]bool{}
	for _, d := range deps {
		i, ok := fd.fleet.ownerIndex(d.Name)
		if !ok {
			continue
		}
		switch fd.of[i].report.Mode {
		case report.FeedResync:
			cache.Forget(d.Name)
			v.named[d.Name] = true
		case report.FeedFallback:
			fallback[d.Name] = true
			v.named[d.Name] = true
		}
	}
	return fallback
}

// Vouched counts a deployment the feed of its Director vouched for
// without a fetch.
func (fd *Feeds) Vouched(name string) {
	i, ok := fd.fleet.ownerIndex(name)
	if !ok {
		return
	}
	fd.mu.Lock()
	defer fd.mu.Unlock()
	fd.trusted[i]++
}

// Report is the run's feed report: the Directors' together, with the
// deployments vouched for; false before Read.
func (fd *Feeds) Report() (report.FeedReport, bool) {
	if fd.merged == nil {
		return report.FeedReport{}, false
	}
	r := fd.merged.report
	fd.mu.Lock()
	defer fd.mu.Unlock()
	for _, n := range fd.trusted {
		r.Trusted += n
	}
	return r, true
}

// report is member i's feed report (nil when not read).
func (fd *Feeds) report(i int) *report.FeedReport {
	w := fd.of[i]
	if w == nil {
		return nil
	}
	r := w.report
	fd.mu.Lock()
	r.Trusted = fd.trusted[i]
	fd.mu.Unlock()
	return &r
}

// Save keeps each Director's mark for the next run, with the named
// deployments the run could not fetch (pending says which, of a Director's
// named ones), except for a Director out of the run (the changes its events
// name were not dealt with). A failure is returned per Director, joined.
func (fd *Feeds) Save(ctx context.Context, store memory.StateStore, now time.Time, pending func(named map[string]bool) []string) error {
	var errs []error
	for i := range fd.fleet.members {
		w := fd.of[i]
		if w == nil || fd.fleet.isDown(i) {
			continue
		}
		var p []string
		if w.report.Mode == report.FeedWatch { // a resync fetched (or tried) every deployment; a fallback keeps the old mark
			p = pending(w.named)
		}
		if err := w.save(ctx, store, now, p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// emptyLog is the mark of a Director whose event log was empty: every
// event id is after it.
const emptyLog = "0"

// errGap says the feed does not reach back to the last event read.
var errGap = errors.New("gap in the event feed")

// events reads one page of a Director's event log.
type events func(ctx context.Context, q bosh.EventQuery) ([]bosh.Event, error)

// readWatch reads the feed state from Vault (document doc) and the events since; forced
// says the run fetches everything anyway (the feed is still read, to move
// the mark).
func readWatch(ctx context.Context, mem memory.StateStore, dir events, tasks taskList, doc string, now time.Time, resync time.Duration, forced bool) *watch {
	w := &watch{named: map[string]bool{}, health: map[string]bool{}, doc: doc}
	if _, err := mem.ReadState(ctx, doc, &w.state); err != nil {
		w.fallback(fmt.Sprintf("the feed state could not be read: %v", err))
		return w
	}
	w.loaded = true
	for _, name := range w.state.Pending {
		w.named[name] = true
	}
	newest, err := w.read(ctx, dir)
	if err == nil && tasks != nil {
		err = w.readTasks(ctx, tasks, newest == emptyLog)
	}
	w.report.LastID, w.report.Changed = newest, len(w.named)
	switch {
	case errors.Is(err, errGap):
		// Changes may hide in the gap: everything is fetched, and the mark moves on.
		w.resync(err.Error())
	case err != nil:
		w.report.LastID = "" // the next run reads from the same mark
		w.fallback(err.Error())
	case forced:
		w.resync("a forced run fetches every deployment")
	case w.state.ResyncedAt.IsZero() || now.Sub(w.state.ResyncedAt) >= resync:
		w.resync(fmt.Sprintf("resync_period (%s) since the last full fetch", resync))
	default:
		w.report.Mode = report.FeedWatch
	}
	return w
}

func (w *watch) fallback(reason string) { w.report.Mode, w.report.Reason = report.FeedFallback, reason }
func (w *watch) resync(reason string)   { w.report.Mode, w.report.Reason = report.FeedResync, reason }

// read pages back through the events, newest first, until the last event
// read by the previous run, recording the deployments they name; it
// returns the newest id. A feed that does not reach the last id (pruned
// events, a new Director, more than maxFeedPages pages) is errGap.
func (w *watch) read(ctx context.Context, dir events) (newest string, err error) {
	last := w.state.LastID
	q := bosh.EventQuery{}
	for page := 0; page < maxFeedPages; page++ {
		events, err := dir(ctx, q)
		w.report.Pages++
		if err != nil {
			return newest, fmt.Errorf("reading the Director's events: %w", err)
		}
		if len(events) == 0 && page == 0 && (last == "" || last == emptyLog) {
			// No event at all: nothing can have been missed; the mark is
			// "before the first event".
			return emptyLog, nil
		}
		if len(events) > 0 && newest == "" {
			newest = events[0].ID
		}
		for _, e := range events {
			if last != "" {
				older, err := bosh.IDBefore(last, e.ID)
				if err != nil {
					return newest, err
				}
				if !older { // e is the last event read, or older: the feed is whole
					return newest, nil
				}
			}
			w.report.Events++
			w.name(e)
		}
		if last == "" {
			return newest, fmt.Errorf("%w: no event read yet (first run, or a new feed state)", errGap)
		}
		if len(events) < bosh.EventsPage {
			return newest, fmt.Errorf("%w: event %s is no longer in the Director's log (pruned, or another Director)", errGap, last)
		}
		q.BeforeID = events[len(events)-1].ID
	}
	return newest, fmt.Errorf("%w: more than %d events since event %s", errGap, maxFeedPages*bosh.EventsPage, last)
}

// healthEvents are the object types of events that may change an
// instance's health: the Director's instance and VM events, the Health
// Monitor's alerts.
var healthEvents = map[string]bool{"instance": true, "vm": true, "alert": true}

// name records the deployment an event concerns.
func (w *watch) name(e bosh.Event) {
	if e.Deployment != "" {
		w.named[e.Deployment] = true
		if healthEvents[e.ObjectType] {
			w.health[e.Deployment] = true
		}
	}
	if e.ObjectType == "deployment" && e.ObjectName != "" {
		w.named[e.ObjectName] = true
	}
	w.report.Changed = len(w.named)
}
