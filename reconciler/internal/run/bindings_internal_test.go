package run

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Lost bindings kept as takeOutcomes keeps them, however many and however
// hostile their ids and reasons, leave the document within a state
// document's bounds.
func TestLostBindingsStayWithinAStateDocument(t *testing.T) {
	for _, text := range []string{"the backup holds no credentials", strings.Repeat("<\u202e&", 1000)} {
		doc := BindingsDoc{Cursor: strings.Repeat("c", 255), Lost: map[string]map[string]string{}}
		size, kept := 0, 0
		for i := range 20_000 {
			id, bid := fmt.Sprintf("%0255d", i/5), fmt.Sprintf("%0255d", i)
			reason := report.Truncate(text, maxLostReason)
			if size+lostBytes(id, bid, reason) > maxLostBytes {
				continue
			}
			size += lostBytes(id, bid, reason)
			if doc.Lost[id] == nil {
				doc.Lost[id] = map[string]string{}
			}
			doc.Lost[id][bid] = reason
			kept++
		}
		data, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > vault.MaxStateBytes {
			t.Errorf("%d lost bindings kept in %d bytes, over %d", kept, len(data), vault.MaxStateBytes)
		}
		if size != lostSize(doc.Lost) {
			t.Errorf("the size counted (%d) is not lostSize's (%d)", size, lostSize(doc.Lost))
		}
		if kept < 100 { // ids of 255 characters and reasons all escapes: some 1.3 KB each
			t.Errorf("only %d kept", kept)
		}
	}
}

// One instance's outcomes: a restored binding is reported, an unlisted one
// counted, a lost one kept in the document and told once (a loss known
// before is kept, not told again); a binding of the instance no longer
// said lost leaves the document.
func TestTakeOutcomesKeepsAndTellsEachLossOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		was      map[string]string // the instance's lost bindings before
		outcomes map[string]string
		restored int
		unlisted int
		lost     map[string]string // after
		fresh    []string
	}{
		{name: "a binding put back", outcomes: map[string]string{"b1": "restored from backup 1"}, restored: 1},
		{name: "a binding the platform does not list", outcomes: map[string]string{"b1": "unlisted: gone"}, unlisted: 1},
		{name: "a new loss", outcomes: map[string]string{"b1": "lost: no backup holds it"},
			lost: map[string]string{"b1": "no backup holds it"}, fresh: []string{"b1"}},
		{name: "a known loss", was: map[string]string{"b1": "no backup holds it"}, outcomes: map[string]string{"b1": "lost: no backup holds it"},
			lost: map[string]string{"b1": "no backup holds it"}},
		{name: "a loss found back", was: map[string]string{"b1": "no backup holds it", "b2": "x"},
			outcomes: map[string]string{"b1": "restored from backup 2", "b3": "lost: y"}, restored: 1,
			lost: map[string]string{"b3": "y"}, fresh: []string{"b3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := BindingsDoc{Lost: map[string]map[string]string{"other": {"b9": "z"}}}
			if tc.was != nil {
				doc.Lost["i1"] = tc.was
			}
			rep := report.BindingsReport{}
			fresh := takeOutcomes("i1", tc.outcomes, &doc, &rep)
			if len(rep.Restored) != tc.restored || rep.Unlisted != tc.unlisted {
				t.Fatalf("report %+v, want %d restored, %d unlisted", rep, tc.restored, tc.unlisted)
			}
			if !maps.Equal(doc.Lost["i1"], tc.lost) || doc.Lost["other"]["b9"] != "z" {
				t.Fatalf("document %v, want i1 %v and the other instance's kept", doc.Lost, tc.lost)
			}
			var told []string
			for _, l := range fresh {
				if l.InstanceID != "i1" || l.Reason != tc.lost[l.BindingID] {
					t.Fatalf("told %+v", l)
				}
				told = append(told, l.BindingID)
			}
			if !slices.Equal(told, tc.fresh) {
				t.Fatalf("told %v, want %v", told, tc.fresh)
			}
		})
	}
}

// The turn is the owned, deployed, not busy instances, in order from the
// cursor and round to the start.
func TestBindingTurnTakesTheCheckableInTurn(t *testing.T) {
	index := map[string]*vault.Record{
		"a": {PlanID: "p"}, "b": {PlanID: "p"}, "c": {PlanID: "p"},
		"orphaned": {PlanID: "p", Orphaned: true},
		"busy":     {PlanID: "p", LastOperation: &vault.Operation{State: vault.OperationInProgress}},
		"unlisted": {PlanID: "p"},
	}
	deps := []bosh.Deployment{{Name: "p-a"}, {Name: "p-b"}, {Name: "p-c"}, {Name: "p-orphaned"}, {Name: "p-busy"}}
	seen := newListing(&vault.Index{Records: index}).with(deps)
	for cursor, want := range map[string][]string{"": {"a", "b", "c"}, "a": {"b", "c", "a"}, "c": {"a", "b", "c"}, "bb": {"c", "a", "b"}} {
		if got := bindingTurn(seen, cursor); !slices.Equal(got, want) {
			t.Errorf("after %q: %v, want %v", cursor, got, want)
		}
	}
}
