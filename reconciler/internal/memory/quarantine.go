package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// quarantineState is the name of the reconciler's quarantine document in
// Vault (see StateStore).
const quarantineState = "quarantine"

// StateStore keeps the reconciler's state documents in Vault (the
// quarantine, the event feeds' marks); *vault.State has it.
type StateStore interface {
	// ReadState decodes the named state document into v; false when absent.
	ReadState(ctx context.Context, name string, v any) (bool, error)
	// WriteState writes the named state document.
	WriteState(ctx context.Context, name string, v any) error
}

// MaxErrorText bounds an error text kept in a report (a quarantined item's,
// a Director's, each of a logged run's).
const MaxErrorText = 1024

// Bounds of the quarantine document, so that its JSON stays within a state
// document's 256 KiB (50 deployments failing with hostile errors took
// 300 KB: every save failed and every run with it): the items it keeps, by
// count and bytes, and a quarantined item's error. While it is full, a new
// failure is not quarantined (nor announced): the next run tries it again.
const (
	MaxQuarantined      = 1000
	MaxQuarantinedBytes = 200 << 10
	maxQuarantinedError = 256
)

// itemBytes is what it takes in the document's JSON (its key too).
func itemBytes(it *report.Quarantined) int {
	data, _ := json.Marshal(it)
	return len(data) + len(it.Key()) + 8
}

// quarantineDoc is the document kept in Vault.
type quarantineDoc struct {
	Version int                            `json:"version"`
	Items   map[string]*report.Quarantined `json:"items"`
}

// Quarantine is a run's view of the quarantine: read at the start of the
// run, changed at its end and written back when it changed. It is safe for
// concurrent use.
type Quarantine struct {
	policy Policy
	now    time.Time
	force  map[string]bool // instance ids the run tries whatever their backoff
	all    bool            // the run tries every quarantined item
	loaded bool            // false: it could not be read; nothing is skipped or written

	mu      sync.Mutex
	items   map[string]*report.Quarantined // by key
	skipped map[string]bool                // keys this run skipped
}

// NewQuarantine is an empty quarantine for a run starting at now.
func NewQuarantine(p Policy, now time.Time, opts report.RunOptions) *Quarantine {
	q := &Quarantine{policy: p, now: now, all: opts.RetryQuarantined, force: map[string]bool{},
		items: map[string]*report.Quarantined{}, skipped: map[string]bool{}}
	for _, id := range opts.Instances {
		q.force[id] = true
	}
	if opts.Scope.Instance != "" {
		q.force[opts.Scope.Instance] = true
	}
	return q
}

// Load reads the quarantine document; an item that does not make sense is dropped.
func (q *Quarantine) Load(ctx context.Context, m StateStore) error {
	var doc quarantineDoc
	if _, err := m.ReadState(ctx, quarantineState, &doc); err != nil {
		return fmt.Errorf("reading the quarantine: %w", err)
	}
	for _, it := range doc.Items {
		if it != nil && (it.Deployment != "" || it.InstanceID != "") {
			q.items[it.Key()] = it
		}
	}
	q.loaded = true
	return nil
}

// Skip says whether the run leaves the item alone: it is quarantined, its
// backoff has not expired, and the run was not asked to try it. The
// deployment's instance id (may be empty) lets the operator force it by id.
func (q *Quarantine) Skip(key, instanceID string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	it, ok := q.items[key]
	if !ok || q.all || !q.now.Before(it.NextAttempt) || q.force[instanceID] || q.force[it.InstanceID] {
		return false
	}
	q.skipped[key] = true
	return true
}

// Skipped is what the run skipped, sorted by key.
func (q *Quarantine) Skipped() []report.Quarantined {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := []report.Quarantined{}
	for _, k := range slices.Sorted(maps.Keys(q.skipped)) {
		out = append(out, *q.items[k])
	}
	return out
}

// Change is what the end of a run did to the quarantine.
type Change struct {
	Added    []report.Quarantined // quarantined by this run (or again)
	Released []report.Quarantined // tried and in step again, or their deployment is gone
}

// Empty says the run changed nothing.
func (c Change) Empty() bool { return len(c.Added) == 0 && len(c.Released) == 0 }

// Settle applies a complete run's outcome at time now (the backoff counts
// from the failure's recording, not from the run's start): every item that
// failed is quarantined (again, with a longer backoff); every quarantined
// item the run tried and that did not fail, and every deployment no longer
// listed, is released. An item considered (considered) whose failure is
// excused (the Director's, not its own) is neither quarantined nor released:
// the next run tries it again. instanceOf names the instance of a
// deployment, when known.
func (q *Quarantine) Settle(now time.Time, failed map[string]string, excused map[string]bool, listed map[string]bool,
	instanceOf func(string) string, considered func(key string) bool) Change {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch := Change{Added: []report.Quarantined{}, Released: []report.Quarantined{}}
	size := 0
	for _, it := range q.items {
		size += itemBytes(it)
	}
	for _, key := range slices.Sorted(maps.Keys(q.items)) {
		it := q.items[key]
		_, failedNow := failed[key]
		gone := it.Deployment != "" && !listed[it.Deployment]
		if ((!q.skipped[key] && !failedNow) || gone) && considered(key) && (gone || !excused[key]) {
			ch.Released = append(ch.Released, *it)
			size -= itemBytes(it)
			delete(q.items, key)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(failed)) {
		kind, name, ok := strings.Cut(key, " ")
		if !ok || excused[key] {
			continue
		}
		it := q.items[key]
		if it == nil {
			it = &report.Quarantined{Since: now}
			if kind == "deployment" {
				it.Deployment, it.InstanceID = name, instanceOf(name)
			} else {
				it.InstanceID = name
			}
			it.LastError = report.Truncate(failed[key], maxQuarantinedError)
			if len(q.items) >= MaxQuarantined || size+itemBytes(it)+64 > MaxQuarantinedBytes {
				continue // full: not quarantined, tried again by the next run
			}
			q.items[key] = it
		} else {
			size -= itemBytes(it)
		}
		it.Failures++
		it.LastError = report.Truncate(failed[key], maxQuarantinedError)
		it.LastFailedAt = now
		it.NextAttempt = now.Add(q.policy.QuarantineWait(it.Failures))
		size += itemBytes(it)
		ch.Added = append(ch.Added, *it)
	}
	return ch
}

// stormShare is the share of the listed deployments that must fail on
// transient faults of the Directors for those failures to be taken for
// the Directors' (a storm of 503s), not the deployments' own.
const stormShare = 0.05

// Storm says whether transient faults of the Directors (bosh.Transient)
// that hit this many keys, in a run that listed this many deployments, are
// a storm: at least two keys and at least stormShare of the deployments.
// One deployment failing among healthy ones is not.
func Storm(transient, listed int) bool {
	return transient >= 2 && float64(transient) >= stormShare*float64(listed)
}

// List is every quarantined item, sorted by key.
func (q *Quarantine) List() []report.Quarantined {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]report.Quarantined, 0, len(q.items))
	for _, k := range slices.Sorted(maps.Keys(q.items)) {
		out = append(out, *q.items[k])
	}
	slices.SortStableFunc(out, func(a, b report.Quarantined) int { return cmp.Compare(a.Key(), b.Key()) })
	return out
}

// Save writes the quarantine document.
func (q *Quarantine) Save(ctx context.Context, m StateStore) error {
	q.mu.Lock()
	doc := quarantineDoc{Version: 1, Items: maps.Clone(q.items)}
	q.mu.Unlock()
	if err := m.WriteState(ctx, quarantineState, doc); err != nil {
		return fmt.Errorf("writing the quarantine: %w", err)
	}
	return nil
}

// Loaded says whether the quarantine could be read: when not, the run
// skips nothing and writes nothing back.
func (q *Quarantine) Loaded() bool { return q.loaded }

// Item is the quarantined item of key ("deployment NAME" or "instance ID"),
// nil when there is none.
func (q *Quarantine) Item(key string) *report.Quarantined {
	q.mu.Lock()
	defer q.mu.Unlock()
	if it, ok := q.items[key]; ok {
		c := *it
		return &c
	}
	return nil
}
