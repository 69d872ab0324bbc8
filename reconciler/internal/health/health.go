package health

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// Doc is the state document the reconciler keeps in Vault: the unhealthy
// instances (a healthy one has no entry), and the deployments the next run
// asks whatever its share (their check failed, or a run had more to ask
// than it may).
type Doc struct {
	Unhealthy map[string]report.UnhealthyInstance `json:"unhealthy"`
	Pending   []string                            `json:"pending,omitempty"`
}

// Bounds of the document, so that its JSON stays within a state
// document's 256 KiB whatever the Director says (10,000 entries took 4 MB:
// every write failed and health was never tracked again): the unhealthy
// instances it keeps, by count and bytes (beyond, the newest are not kept
// nor announced; the next runs find them again), and the deployments it
// carries to the next run, by count and bytes.
const (
	MaxEntries      = 2000
	MaxEntriesBytes = 200 << 10
	MaxPending      = 2000
	MaxPendingBytes = 32 << 10
)

// entryBytes is what e takes in the document's JSON (its key, its id,
// escaped as JSON escapes them).
func entryBytes(e report.UnhealthyInstance) int {
	data, _ := json.Marshal(e)
	return len(data) + 2*len(e.InstanceID) + 8
}

// PendingBytes is about what a pending deployment name takes in the
// document's JSON.
func PendingBytes(name string) int {
	data, _ := json.Marshal(name)
	return len(data) + 1
}

// DocName is the state document's name.
const DocName = "health"

// maxListed bounds the VMs an entry lists, maxFailing the processes of a
// VM, maxText the text of each: the Director's answers are not trusted to
// be small.
const (
	maxListed  = 5
	maxFailing = 5
	maxText    = 128
)

// Judge reads a deployment's VM states: the VMs of each instance that
// should run and do not, by instance id. A VM whose instance is stopped or
// detached on purpose, or that is not the instance's active one, is not
// judged.
func Judge(states []bosh.VMState) map[string][]report.UnhealthyVM {
	out := map[string][]report.UnhealthyVM{}
	for _, s := range states {
		if s.State != "started" || (s.Active != nil && !*s.Active) || s.Running() || s.JobState == "starting" {
			continue // stopped on purpose, not its VM, running, or being updated
		}
		v := report.UnhealthyVM{Instance: textcut.Prefix(fmt.Sprintf("%s/%d (%s)", s.Job, s.Index, s.ID), maxText),
			CID: textcut.Prefix(s.CID, maxText), JobState: textcut.Prefix(s.JobState, maxText)}
		if v.JobState == "" {
			v.JobState = "unknown"
		}
		for _, p := range s.Processes {
			if p.State != bosh.JobRunning && len(v.Failing) < maxFailing {
				v.Failing = append(v.Failing, textcut.Prefix(p.Name, maxText))
			}
		}
		if len(out[s.ID]) < maxListed {
			out[s.ID] = append(out[s.ID], v)
		}
	}
	return out
}

// Sweep spreads the check of every deployment over Period: each run checks
// the deployments of its slot, Period/Interval slots, so that every
// deployment is checked once a Period and each run about n/slots of them.
// Period 0 is no sweep.
type Sweep struct {
	Period, Interval time.Duration
}

// Slots is how many runs a sweep takes.
func (s Sweep) Slots() int64 {
	if s.Period <= 0 || s.Interval <= 0 {
		return 1
	}
	return max(1, int64((s.Period+s.Interval-1)/s.Interval))
}

// Slot is the sweep slot of a run that starts at t.
func (s Sweep) Slot(t time.Time) int64 {
	if s.Interval <= 0 {
		return 0
	}
	return t.UnixNano() / int64(s.Interval)
}

// Share is the deployments of names a run in slot checks: those whose
// name hashes to the slot, so that a deployment keeps its slot whatever
// else comes and goes, and is checked once a Period; shares are even up to
// the hash's spread (about the square root of a share).
func (s Sweep) Share(names []string, slot int64) []string {
	if s.Period <= 0 {
		return nil
	}
	n := uint64(s.Slots())
	want := uint64(((slot % int64(n)) + int64(n)) % int64(n))
	var out []string
	for _, name := range names {
		h := fnv.New64a()
		_, _ = h.Write([]byte(name))
		if h.Sum64()%n == want {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Observation is what a run learnt of one deployment's instances.
type Observation struct {
	Deployment string
	// Instance is the instance the reconciler matched the deployment to
	// (its VMs belong to it).
	Instance string
	// VMs are what Judge found of its VMs, every instance together.
	VMs map[string][]report.UnhealthyVM
}

// Transition is an instance that became unhealthy or recovered.
type Transition struct {
	Entry     report.UnhealthyInstance
	Unhealthy bool
}

// Apply folds a run's observations into doc at now: an instance with a VM
// that does not run is (still) unhealthy, since when it first was; one
// whose VMs all run is healthy (no entry). It returns the new document and
// the transitions, in the order of the instance ids.
func Apply(doc Doc, obs []Observation, now time.Time) (Doc, []Transition) {
	next := Doc{Unhealthy: maps.Clone(doc.Unhealthy), Pending: doc.Pending}
	if next.Unhealthy == nil {
		next.Unhealthy = map[string]report.UnhealthyInstance{}
	}
	var out []Transition
	size := 0
	for _, e := range next.Unhealthy {
		size += entryBytes(e)
	}
	for _, o := range obs {
		var vms []report.UnhealthyVM
		for _, id := range slices.Sorted(maps.Keys(o.VMs)) {
			vms = append(vms, o.VMs[id]...)
		}
		prev, was := next.Unhealthy[o.Instance]
		e := report.UnhealthyInstance{InstanceID: o.Instance, Deployment: o.Deployment, Since: now, CheckedAt: now, VMs: vms[:min(len(vms), maxListed)]}
		switch {
		case len(vms) == 0 && was:
			delete(next.Unhealthy, o.Instance)
			size -= entryBytes(prev)
			prev.CheckedAt = now
			out = append(out, Transition{Entry: prev})
		case len(vms) > 0 && was:
			e.Since = prev.Since
			next.Unhealthy[o.Instance] = e
			size += entryBytes(e) - entryBytes(prev)
		case len(vms) > 0 && len(next.Unhealthy) < MaxEntries && size+entryBytes(e) <= MaxEntriesBytes:
			out = append(out, Transition{Entry: e, Unhealthy: true})
			next.Unhealthy[o.Instance] = e
			size += entryBytes(e)
		}
	}
	for _, e := range slices.Backward(next.Sorted()) { // entries that grew past the bound: the newest go, untold
		if size <= MaxEntriesBytes {
			break
		}
		delete(next.Unhealthy, e.InstanceID)
		size -= entryBytes(e)
	}
	slices.SortFunc(out, func(a, b Transition) int { return strings.Compare(a.Entry.InstanceID, b.Entry.InstanceID) })
	return next, out
}

// Forget drops the entries of instances that no longer exist (keep says
// which do), so that a deleted instance does not stay unhealthy.
func (d Doc) Forget(keep func(instanceID string) bool) Doc {
	next := Doc{Unhealthy: map[string]report.UnhealthyInstance{}, Pending: d.Pending}
	for id, e := range d.Unhealthy {
		if keep(id) {
			next.Unhealthy[id] = e
		}
	}
	return next
}

// Sorted lists the entries, oldest first.
func (d Doc) Sorted() []report.UnhealthyInstance {
	out := slices.Collect(maps.Values(d.Unhealthy))
	slices.SortFunc(out, func(a, b report.UnhealthyInstance) int {
		if c := a.Since.Compare(b.Since); c != 0 {
			return c
		}
		return strings.Compare(a.InstanceID, b.InstanceID)
	})
	return out
}

// Equal says whether two documents hold the same entries (checked at the
// same time) and the same pending deployments.
func (d Doc) Equal(o Doc) bool {
	if len(d.Unhealthy) != len(o.Unhealthy) || !slices.Equal(d.Pending, o.Pending) {
		return false
	}
	for id, e := range d.Unhealthy {
		f, ok := o.Unhealthy[id]
		if !ok || e.Deployment != f.Deployment || !e.Since.Equal(f.Since) || !e.CheckedAt.Equal(f.CheckedAt) ||
			!slices.EqualFunc(e.VMs, f.VMs, sameVM) {
			return false
		}
	}
	return true
}

func sameVM(a, b report.UnhealthyVM) bool {
	return a.Instance == b.Instance && a.CID == b.CID && a.JobState == b.JobState && slices.Equal(a.Failing, b.Failing)
}

// Tracker is what the run and the health loop share: the document as the
// loop last left it, and the newest handover of a run. It is safe for
// concurrent use.
type Tracker struct {
	mu      sync.Mutex
	current Doc
	handed  Handover
	gen     uint64 // how many handovers were made
}

// Hand keeps a run's handover for the loop, in place of the last one.
func (t *Tracker) Hand(h Handover) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.handed = h
	t.gen++
}

// Handed is the newest handover and its generation (0: none yet).
func (t *Tracker) Handed() (Handover, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.handed, t.gen
}

// Set publishes the document the loop left.
func (t *Tracker) Set(d Doc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.current = d
}

// Current is the document the loop last left.
func (t *Tracker) Current() Doc {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Doc{Unhealthy: maps.Clone(t.current.Unhealthy), Pending: slices.Clone(t.current.Pending)}
}
