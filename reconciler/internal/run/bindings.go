package run

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
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

// checkBindings checks the bindings of the next instances in turn (at most
// MaxBindingChecks, owned, deployed, not busy) through the broker, which
// puts lost credentials back or says them lost; lost ones are told to the
// webhooks once and kept in the document until a later check finds them
// back or gone. Not without the broker; only a whole run checks (phases).
func checkBindings(ctx context.Context, r *run) {
	if r.p.Ops == nil || ctx.Err() != nil {
		return
	}
	var doc BindingsDoc
	if _, err := r.vault.Memory.ReadState(ctx, BindingsDocName, &doc); err != nil {
		r.log.Warn("the bindings' check could not read its document; no binding is checked this run", "error", err)
		return
	}
	before := BindingsDoc{Cursor: doc.Cursor, Lost: maps.Clone(doc.Lost)}
	if doc.Lost == nil {
		doc.Lost = map[string]map[string]string{}
	}
	ids := bindingTurn(r, doc.Cursor)
	rep := report.BindingsReport{Restored: []report.RestoredBinding{}}
	for _, id := range ids {
		if ctx.Err() != nil {
			break
		}
		checked, outcomes, err := r.p.Ops.RecoverBindings(ctx, id)
		doc.Cursor = id
		if err != nil {
			r.log.Warn("an instance's bindings could not be checked", "instance", id, "error", err)
			continue
		}
		rep.Instances++
		rep.Bindings += checked
		takeOutcomes(r, id, outcomes, &doc, &rep)
	}
	rep.Lost, rep.LostTotal = lostList(doc.Lost)
	if doc.Cursor != before.Cursor || !sameLost(doc.Lost, before.Lost) {
		if err := r.vault.Memory.WriteState(ctx, BindingsDocName, doc); err != nil {
			r.log.Warn("the bindings' check could not keep its document; the next run checks the same instances again", "error", err)
		}
	}
	r.ledger.Count(func(s *report.Summary) { s.Bindings = &rep })
}

// takeOutcomes applies one instance's outcomes to the document and the report.
func takeOutcomes(r *run, id string, outcomes map[string]string, doc *BindingsDoc, rep *report.BindingsReport) {
	was := doc.Lost[id]
	delete(doc.Lost, id)
	size := lostSize(doc.Lost)
	name := r.seen.index[id].Deployment(id)
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
			if _, known := was[bid]; known {
				continue
			}
			msg := "binding " + bid + ": its credentials are gone from Vault and could not be put back: " + reason
			r.log.Warn("binding lost", "instance", id, "binding", bid, "reason", reason)
			r.hist.Add(id, vault.Event{Kind: "binding_lost", Deployment: name, Message: msg, Details: map[string]string{"binding_id": bid}})
			r.hist.Notify(notify.Event{Type: notify.BindingLost, InstanceID: id, Deployment: name,
				Director: r.directorOf(id, name), Reason: msg, RunID: r.id, Time: r.p.Now().UTC()})
		}
	}
}

// bindingTurn is the instances whose bindings this run checks: owned,
// deployed (listed), no operation in progress, in turn (Turn).
func bindingTurn(r *run, cursor string) []string {
	var all []string
	for id, rec := range r.seen.index {
		if rec.Owned() && !rec.Orphaned && !rec.OperationInProgress() && r.seen.listed[rec.Deployment(id)] {
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
