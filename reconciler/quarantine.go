package reconciler

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

// quarantineState is the name of the reconciler's quarantine document in
// Vault (see Memory).
const quarantineState = "quarantine"

// maxQuarantineError bounds the error text kept per item.
const maxQuarantineError = 1024

// quarantineDoc is the document kept in Vault.
type quarantineDoc struct {
	Version int                     `json:"version"`
	Items   map[string]*Quarantined `json:"items"`
}

// quarantine is a run's view of the quarantine: read at the start of the
// run, changed at its end and written back when it changed.
type quarantine struct {
	cfg    config.QuarantineConfig
	now    time.Time
	force  map[string]bool // instance ids the run tries whatever their backoff
	all    bool            // the run tries every quarantined item
	loaded bool            // false: it could not be read; nothing is skipped or written

	mu      sync.Mutex
	items   map[string]*Quarantined // by key
	skipped map[string]bool         // keys this run skipped
}

// newQuarantine is an empty quarantine for a run starting at now.
func newQuarantine(cfg config.QuarantineConfig, now time.Time, opts RunOptions) *quarantine {
	q := &quarantine{cfg: cfg, now: now, all: opts.RetryQuarantined, force: map[string]bool{},
		items: map[string]*Quarantined{}, skipped: map[string]bool{}}
	for _, id := range opts.Instances {
		q.force[id] = true
	}
	if opts.Scope.Instance != "" {
		q.force[opts.Scope.Instance] = true
	}
	return q
}

// load reads the quarantine document; an item that does not make sense is dropped.
func (q *quarantine) load(ctx context.Context, m Memory) error {
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

// skip says whether the run leaves the item alone: it is quarantined, its
// backoff has not expired, and the run was not asked to try it. The
// deployment's instance id (may be empty) lets the operator force it by id.
func (q *quarantine) skip(key, instanceID string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	it, ok := q.items[key]
	if !ok || q.all || !q.now.Before(it.NextAttempt) || q.force[instanceID] || q.force[it.InstanceID] {
		return false
	}
	q.skipped[key] = true
	return true
}

// skippedItems is what the run skipped, sorted by key.
func (q *quarantine) skippedItems() []Quarantined {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := []Quarantined{}
	for _, k := range slices.Sorted(maps.Keys(q.skipped)) {
		out = append(out, *q.items[k])
	}
	return out
}

// backoff is the wait after the n-th failed run in a row.
func (q *quarantine) backoff(n int) time.Duration {
	d := q.cfg.Backoff
	for i := 1; i < n && d < q.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, q.cfg.MaxBackoff)
}

// change is what the end of a run did to the quarantine.
type quarantineChange struct {
	added    []Quarantined // quarantined by this run (or again)
	released []Quarantined // tried and in step again, or their deployment is gone
}

func (c quarantineChange) empty() bool { return len(c.added) == 0 && len(c.released) == 0 }

// settle applies a complete run's outcome at time now (the backoff counts
// from the failure's recording, not from the run's start): every item that
// failed is quarantined (again, with a longer backoff); every quarantined
// item the run tried and that did not fail, and every deployment no longer
// listed, is released. instanceOf names the instance of a deployment, when known.
func (q *quarantine) settle(now time.Time, failed map[string]string, listed map[string]bool, instanceOf func(string) string,
	considered func(key string) bool) quarantineChange {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch := quarantineChange{added: []Quarantined{}, released: []Quarantined{}}
	for _, key := range slices.Sorted(maps.Keys(q.items)) {
		it := q.items[key]
		_, failedNow := failed[key]
		gone := it.Deployment != "" && !listed[it.Deployment]
		if ((!q.skipped[key] && !failedNow) || gone) && considered(key) {
			ch.released = append(ch.released, *it)
			delete(q.items, key)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(failed)) {
		kind, name, ok := strings.Cut(key, " ")
		if !ok {
			continue
		}
		it := q.items[key]
		if it == nil {
			it = &Quarantined{Since: now}
			if kind == "deployment" {
				it.Deployment, it.InstanceID = name, instanceOf(name)
			} else {
				it.InstanceID = name
			}
			q.items[key] = it
		}
		it.Failures++
		it.LastError = truncate(failed[key], maxQuarantineError)
		it.LastFailedAt = now
		it.NextAttempt = now.Add(q.backoff(it.Failures))
		ch.added = append(ch.added, *it)
	}
	return ch
}

// list is every quarantined item, sorted by key.
func (q *quarantine) list() []Quarantined {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]Quarantined, 0, len(q.items))
	for _, k := range slices.Sorted(maps.Keys(q.items)) {
		out = append(out, *q.items[k])
	}
	slices.SortStableFunc(out, func(a, b Quarantined) int { return cmp.Compare(a.Key(), b.Key()) })
	return out
}

// save writes the quarantine document.
func (q *quarantine) save(ctx context.Context, m Memory) error {
	q.mu.Lock()
	doc := quarantineDoc{Version: 1, Items: maps.Clone(q.items)}
	q.mu.Unlock()
	if err := m.WriteState(ctx, quarantineState, doc); err != nil {
		return fmt.Errorf("writing the quarantine: %w", err)
	}
	return nil
}

// truncate cuts s to at most n bytes (on a rune boundary).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
