package run

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// MaxBindingChecks bounds the instances whose bindings one run checks: the
// fleet is gone through in turn, from where the last run stopped.
const MaxBindingChecks = 300

// BindingsDocName is the state document of the bindings' check: where the
// next run goes on, and the bindings found lost (by instance, then binding).
const BindingsDocName = "bindings"

// maxLostBytes bounds the lost bindings the document keeps (their JSON
// within a state document's 256 KiB: 10,000 took 1.6 MB, the write failed
// and every run checked the same instances, telling the same losses);
// maxLostReason each one's reason. A loss the document cannot keep is not
// told: a later check, with room, tells it.
const (
	maxLostBytes  = 200 << 10
	maxLostReason = 256
)

// lostBytes is about what a lost binding takes in the document's JSON.
func lostBytes(id, bid, reason string) int {
	data, _ := json.Marshal([]string{id, bid, reason})
	return len(data) + 8
}

// lostSize is what the lost bindings take in the document's JSON.
func lostSize(lost map[string]map[string]string) int {
	size := 0
	for id, m := range lost {
		for bid, reason := range m {
			size += lostBytes(id, bid, reason)
		}
	}
	return size
}

// BindingsDoc is the bindings' check's state document.
type BindingsDoc struct {
	Cursor string                       `json:"cursor"`
	Lost   map[string]map[string]string `json:"lost"`
}

// bindingCheck is the bindings phase: it checks the bindings of the next
// instances in turn (at most MaxBindingChecks, owned, deployed, not busy)
// through the broker, which puts lost credentials back or says them lost;
// lost ones are told to the webhooks once and kept in the document until a
// later check finds them back or gone.
type bindingCheck struct {
	ops      ports.Operations  // the broker
	state    memory.StateStore // keeps the document (where the turn goes on, the lost)
	record   func(id string, e vault.Event)
	notify   func(notify.Event)
	director func(id, deployment string) string // names an instance's Director in notifications
	now      func() time.Time
	log      *slog.Logger
}

// bindingsIn is what the bindings phase is given: the listing and the run's
// id.
type bindingsIn struct {
	seen  listing
	runID string
}

// Run checks this run's turn and answers the phase's section of the
// summary; nil when it checked nothing (no broker, the run stopping, the
// document unread).
func (c bindingCheck) Run(ctx context.Context, in bindingsIn) *report.BindingsReport {
	if c.ops == nil || ctx.Err() != nil {
		return nil
	}
	var doc BindingsDoc
	if _, err := c.state.ReadState(ctx, BindingsDocName, &doc); err != nil {
		c.log.Warn("the bindings' check could not read its document; no binding is checked this run", "error", err)
		return nil
	}
	before := BindingsDoc{Cursor: doc.Cursor, Lost: maps.Clone(doc.Lost)}
	if doc.Lost == nil {
		doc.Lost = map[string]map[string]string{}
	}
	rep := report.BindingsReport{Restored: []report.RestoredBinding{}}
	for _, id := range bindingTurn(in.seen, doc.Cursor) {
		if ctx.Err() != nil {
			break
		}
		checked, outcomes, err := c.ops.RecoverBindings(ctx, id)
		doc.Cursor = id
		if err != nil {
			c.log.Warn("an instance's bindings could not be checked", "instance", id, "error", err)
			continue
		}
		rep.Instances++
		rep.Bindings += checked
		for _, l := range takeOutcomes(id, outcomes, &doc, &rep) {
			c.tell(in, l)
		}
	}
	rep.Lost, rep.LostTotal = lostList(doc.Lost)
	if doc.Cursor != before.Cursor || !sameLost(doc.Lost, before.Lost) {
		if err := c.state.WriteState(ctx, BindingsDocName, doc); err != nil {
			c.log.Warn("the bindings' check could not keep its document; the next run checks the same instances again", "error", err)
		}
	}
	return &rep
}

// tell tells a binding newly found lost: the log, the instance's history,
// the webhooks.
func (c bindingCheck) tell(in bindingsIn, l report.LostBinding) {
	name := in.seen.index[l.InstanceID].Deployment(l.InstanceID)
	msg := "binding " + l.BindingID + ": its credentials are gone from Vault and could not be put back: " + l.Reason
	c.log.Warn("binding lost", "instance", l.InstanceID, "binding", l.BindingID, "reason", l.Reason)
	c.record(l.InstanceID, vault.Event{Kind: "binding_lost", Deployment: name, Message: msg, Details: map[string]string{"binding_id": l.BindingID}})
	c.notify(notify.Event{Type: notify.BindingLost, InstanceID: l.InstanceID, Deployment: name,
		Director: c.director(l.InstanceID, name), Reason: msg, RunID: in.runID, Time: c.now().UTC()})
}

// takeOutcomes applies one instance's outcomes to the document and the
// report, and answers the bindings newly lost (kept in the document, not
// known lost before), to be told: a loss the document has no room for is
// neither kept nor told.
func takeOutcomes(id string, outcomes map[string]string, doc *BindingsDoc, rep *report.BindingsReport) []report.LostBinding {
	was := doc.Lost[id]
	delete(doc.Lost, id)
	size := lostSize(doc.Lost)
	var fresh []report.LostBinding
	for _, bid := range slices.Sorted(maps.Keys(outcomes)) {
		o := outcomes[bid]
		switch {
		case strings.HasPrefix(o, "restored"):
			rep.Restored = append(rep.Restored, report.RestoredBinding{InstanceID: id, BindingID: bid, From: o})
		case strings.HasPrefix(o, "unlisted"):
			rep.Unlisted++
		default:
			reason := report.Truncate(strings.TrimPrefix(o, "lost: "), maxLostReason)
			if size+lostBytes(id, bid, reason) > maxLostBytes {
				continue // no room: neither kept nor told
			}
			size += lostBytes(id, bid, reason)
			if doc.Lost[id] == nil {
				doc.Lost[id] = map[string]string{}
			}
			doc.Lost[id][bid] = reason
			if _, known := was[bid]; !known {
				fresh = append(fresh, report.LostBinding{InstanceID: id, BindingID: bid, Reason: reason})
			}
		}
	}
	return fresh
}

// bindingTurn is the instances whose bindings this run checks: owned,
// deployed (listed), no operation in progress, in turn (Turn).
func bindingTurn(seen listing, cursor string) []string {
	var all []string
	for id, rec := range seen.index {
		if rec.Owned() && !rec.Orphaned && !rec.OperationInProgress() && seen.listed[rec.Deployment(id)] {
			all = append(all, id)
		}
	}
	slices.Sort(all)
	return Turn(all, cursor, MaxBindingChecks)
}

// Turn is the next n of the sorted ids after cursor, going round to the
// start, each at most once.
func Turn(sorted []string, cursor string, n int) []string {
	start, found := slices.BinarySearch(sorted, cursor)
	if found {
		start++
	}
	turn := slices.Clone(sorted[start:min(len(sorted), start+n)])
	if len(turn) < n && start > 0 { // round to the start
		turn = append(turn, sorted[:min(start, n-len(turn))]...)
	}
	return turn
}

// lostList is the lost bindings, by instance then binding, the first
// MaxPlatformListed, and how many there are.
func lostList(lost map[string]map[string]string) ([]report.LostBinding, int) {
	out := []report.LostBinding{}
	total := 0
	for _, id := range slices.Sorted(maps.Keys(lost)) {
		for _, bid := range slices.Sorted(maps.Keys(lost[id])) {
			total++
			if len(out) < report.MaxPlatformListed {
				out = append(out, report.LostBinding{InstanceID: id, BindingID: bid, Reason: lost[id][bid]})
			}
		}
	}
	return out, total
}

// sameLost says whether two lost maps hold the same.
func sameLost(a, b map[string]map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for id, m := range a {
		if !maps.Equal(m, b[id]) {
			return false
		}
	}
	return true
}
