package upgrade

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// DocName is the journal's state document ({mount}/blacksmith/state/upgrades).
const DocName = "upgrades"

// maxQuarantined and maxQuarantineBytes bound the quarantine the journal
// keeps, so that the document stays within a state document's 256 KiB
// whatever its reasons and ids (500 entries with reasons of 1 KiB took
// over 256 KiB: every later write failed, no upgrade could start): past
// them the entries whose wait ends first are dropped (they are tried again
// sooner).
const (
	maxQuarantined     = 500
	maxQuarantineBytes = 200 << 10
)

// maxReason bounds a reason kept in the journal or a report.
const maxReason = 512

// quarantinedBytes is about what q takes in the document's JSON: its id
// twice (the key and the field), its texts as JSON writes them (escaped)
// and the fixed part.
func quarantinedBytes(q *report.UpgradeQuarantined) int {
	return 2*jsonLen(q.InstanceID) + jsonLen(q.Version) + jsonLen(q.State) + jsonLen(q.Reason) + 160
}

// jsonLen is the length of s as a JSON string.
func jsonLen(s string) int {
	b, _ := json.Marshal(s)
	return len(b)
}

// StateStore keeps state documents; *vault.State has it.
type StateStore interface {
	ReadState(ctx context.Context, name string, v any) (bool, error)
	WriteState(ctx context.Context, name string, v any) error
}

// journalDoc is the document in Vault.
type journalDoc struct {
	InFlight   map[string]*report.UpgradeEntry       `json:"in_flight"`
	Quarantine map[string]*report.UpgradeQuarantined `json:"quarantine"`
}

// Journal is the upgrades under way and the upgrade quarantine, kept in
// Vault. It is safe for concurrent use; each change is written through.
type Journal struct {
	store   StateStore
	backoff config.QuarantineConfig
	now     func() time.Time

	mu  sync.Mutex
	doc journalDoc
}

// NewJournal is an empty journal over store: a failed upgrade quarantines
// its instance for q.Backoff, doubling with each failure, up to
// q.MaxBackoff.
func NewJournal(store StateStore, q config.QuarantineConfig, now func() time.Time) *Journal {
	return &Journal{store: store, backoff: q, now: now, doc: emptyDoc()}
}

func emptyDoc() journalDoc {
	return journalDoc{InFlight: map[string]*report.UpgradeEntry{}, Quarantine: map[string]*report.UpgradeQuarantined{}}
}

// Load reads the journal from Vault; entries that make no sense are dropped.
func (j *Journal) Load(ctx context.Context) error {
	var doc journalDoc
	if _, err := j.store.ReadState(ctx, DocName, &doc); err != nil {
		return fmt.Errorf("reading the upgrade journal: %w", err)
	}
	next := emptyDoc()
	for id, e := range doc.InFlight {
		if e != nil && e.InstanceID == id && e.ContextID != "" {
			next.InFlight[id] = e
		}
	}
	for id, q := range doc.Quarantine {
		if q != nil && q.InstanceID == id {
			next.Quarantine[id] = q
		}
	}
	j.mu.Lock()
	j.doc = next
	j.mu.Unlock()
	return nil
}

// Begin records an upgrade under way.
func (j *Journal) Begin(ctx context.Context, e report.UpgradeEntry) error {
	return j.change(ctx, func(d *journalDoc) { d.InFlight[e.InstanceID] = &e })
}

// End records the end of instance id's upgrade: in state (one of the
// Result states) for reason. A failure quarantines the instance (again);
// an instance at its plan's version leaves the quarantine.
func (j *Journal) End(ctx context.Context, id, version, state, reason string) error {
	j.mu.Lock()
	_, inFlight := j.doc.InFlight[id]
	_, held := j.doc.Quarantine[id]
	j.mu.Unlock()
	if !inFlight && !held && !report.UpgradeFailure(state) { // nothing to change: no write
		return nil
	}
	return j.change(ctx, func(d *journalDoc) {
		delete(d.InFlight, id)
		switch {
		case report.UpgradeFailure(state):
			q := d.Quarantine[id]
			if q == nil {
				q = &report.UpgradeQuarantined{InstanceID: id, Since: j.now()}
			}
			q.Failures++
			q.Version, q.State, q.Reason = version, state, cut(reason)
			q.NextAttempt = j.now().Add(retry.Backoff{Base: j.backoff.Backoff, Limit: j.backoff.MaxBackoff}.Ceiling(q.Failures))
			d.Quarantine[id] = q
			trimQuarantine(d.Quarantine)
		case report.UpgradeAtVersion(state):
			delete(d.Quarantine, id)
		}
	})
}

// Forget drops an upgrade under way that is no longer the instance's.
func (j *Journal) Forget(ctx context.Context, id string) error {
	return j.change(ctx, func(d *journalDoc) { delete(d.InFlight, id) })
}

// change applies f to a copy of the document and writes it; the journal
// keeps the copy only once it is written.
func (j *Journal) change(ctx context.Context, f func(*journalDoc)) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	next := journalDoc{InFlight: maps.Clone(j.doc.InFlight), Quarantine: maps.Clone(j.doc.Quarantine)}
	for id, q := range next.Quarantine { // End changes entries in place
		c := *q
		next.Quarantine[id] = &c
	}
	f(&next)
	if err := j.store.WriteState(ctx, DocName, next); err != nil {
		return fmt.Errorf("writing the upgrade journal: %w", err)
	}
	j.doc = next
	return nil
}

// InFlight are the upgrades under way, by instance id.
func (j *Journal) InFlight() []report.UpgradeEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]report.UpgradeEntry, 0, len(j.doc.InFlight))
	for _, id := range slices.Sorted(maps.Keys(j.doc.InFlight)) {
		out = append(out, *j.doc.InFlight[id])
	}
	return out
}

// Quarantine lists the quarantined instances, by id.
func (j *Journal) Quarantine() []report.UpgradeQuarantined {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]report.UpgradeQuarantined, 0, len(j.doc.Quarantine))
	for _, id := range slices.Sorted(maps.Keys(j.doc.Quarantine)) {
		out = append(out, *j.doc.Quarantine[id])
	}
	return out
}

// Held says why instance id is set aside at time now ("" when it is not).
func (j *Journal) Held(id string, now time.Time) string {
	j.mu.Lock()
	defer j.mu.Unlock()
	q := j.doc.Quarantine[id]
	if q == nil || !now.Before(q.NextAttempt) {
		return ""
	}
	return fmt.Sprintf("quarantined until %s after %d failed upgrade(s) to %s (%s: %s); name it to try it now",
		q.NextAttempt.UTC().Format(time.RFC3339), q.Failures, q.Version, q.State, q.Reason)
}

// trimQuarantine keeps the entries whose wait ends last, at most
// maxQuarantined of them and maxQuarantineBytes.
func trimQuarantine(m map[string]*report.UpgradeQuarantined) {
	all := slices.Collect(maps.Values(m))
	slices.SortFunc(all, func(a, b *report.UpgradeQuarantined) int { // the last to end first
		return cmp.Or(b.NextAttempt.Compare(a.NextAttempt), cmp.Compare(a.InstanceID, b.InstanceID))
	})
	size := 0
	for i, q := range all {
		size += quarantinedBytes(q)
		if i >= maxQuarantined || size > maxQuarantineBytes {
			delete(m, q.InstanceID)
		}
	}
}

// cut bounds a reason to maxReason bytes, "…" that marks the cut included,
// on a character boundary.
func cut(s string) string { return textcut.Marked(s, maxReason, "…") }
