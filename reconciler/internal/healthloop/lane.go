package healthloop

import (
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// lane is one Director's share of the loop: what it asks first, the
// slot's sweep, the tasks it has running. Only Serve's goroutine touches
// it.
type lane struct {
	dir Director
	// first are asked as soon as a task may start: named by a run, pending,
	// unhealthy to ask again; queued says what first and sweep hold.
	first  []string
	queued map[string]bool
	// sweep is what is left of the slot's share (and of the last slot's,
	// carried over), started one every pace from slotStart.
	sweep     []string
	slot      int64
	slotStart time.Time
	pace      time.Duration
	swept     int             // sweep tasks started since slotStart
	done      map[string]bool // swept in this slot
	// later are deployments left for the next handover: held by a task
	// when their turn came, or their check failed.
	later    []string
	inFlight map[string]bool
	// pauseUntil: no task starts before it (the Director failed to answer).
	pauseUntil time.Time
	stats      report.HealthLoopDirector
}

func newLane(d Director) *lane {
	return &lane{dir: d, queued: map[string]bool{}, inFlight: map[string]bool{}, done: map[string]bool{}, slot: -1,
		stats: report.HealthLoopDirector{Director: d.Name}}
}

// ask puts name among those asked first, unless it is queued already (a
// sweep item is moved to the front).
func (ln *lane) ask(name string) {
	if ln.inFlight[name] {
		return
	}
	if ln.queued[name] {
		if i := slices.Index(ln.sweep, name); i >= 0 {
			ln.sweep = slices.Delete(ln.sweep, i, i+1)
			ln.first = append(ln.first, name)
		}
		return
	}
	if len(ln.first) >= health.MaxPending {
		return // the sweep comes to it
	}
	ln.queued[name] = true
	ln.first = append(ln.first, name)
}

// reslot spreads the sweep until the slot ends: slot's share (what of it
// was not swept yet: a new handover may bring more), after what is left of
// the last slot, from now, or, within the same slot, from when the next
// one was due (a handover every minute does not start one every minute).
func (ln *lane) reslot(slot int64, share []string, now, end time.Time) {
	start := now
	if slot == ln.slot && ln.pace > 0 {
		if next := ln.slotStart.Add(time.Duration(ln.swept) * ln.pace); next.After(now) {
			start = next
		}
	}
	if slot != ln.slot {
		clear(ln.done)
	}
	ln.slot, ln.slotStart, ln.swept = slot, start, 0
	for _, name := range share {
		if !ln.queued[name] && !ln.inFlight[name] && !ln.done[name] {
			ln.queued[name] = true
			ln.sweep = append(ln.sweep, name)
		}
	}
	ln.pace = 0
	if n := len(ln.sweep); n > 0 && end.After(start) {
		ln.pace = end.Sub(start) / time.Duration(n)
	}
	ln.stats.Slot, ln.stats.SlotShare = slot, len(share)
}

// next is the deployment to ask now, if any: the first of first, else the
// next of the sweep once its time has come; false when none is due.
func (ln *lane) next(now time.Time) (string, bool) {
	if len(ln.first) > 0 {
		name := ln.first[0]
		ln.first = ln.first[1:]
		delete(ln.queued, name)
		return name, true
	}
	if len(ln.sweep) > 0 && !now.Before(ln.slotStart.Add(time.Duration(ln.swept)*ln.pace)) {
		name := ln.sweep[0]
		ln.sweep = ln.sweep[1:]
		delete(ln.queued, name)
		ln.done[name] = true
		ln.swept++
		ln.stats.Swept++
		return name, true
	}
	return "", false
}

// due says whether a deployment waits to be asked now.
func (ln *lane) due(now time.Time) bool {
	return len(ln.first) > 0 ||
		(len(ln.sweep) > 0 && !now.Before(ln.slotStart.Add(time.Duration(ln.swept)*ln.pace)))
}

// forget drops what the lane holds of deployments no longer handed.
func (ln *lane) forget(keep func(string) bool) {
	drop := func(list []string) []string {
		return slices.DeleteFunc(list, func(name string) bool {
			if keep(name) {
				return false
			}
			delete(ln.queued, name)
			return true
		})
	}
	ln.first, ln.sweep = drop(ln.first), drop(ln.sweep)
	ln.later = slices.DeleteFunc(ln.later, func(name string) bool { return !keep(name) })
}

// pending is what the lane has yet to ask of what is asked first, and
// what it left for later.
func (ln *lane) pending() []string {
	return slices.Concat(ln.first, ln.later)
}
