package vault

import (
	"encoding/json"
	"strconv"
	"testing"
	"unsafe"
)

// The records of a shard share their equal strings in the fields a sharer
// takes, and encode to the same bytes as before.
func TestSharerSharesEqualStrings(t *testing.T) {
	raw := json.RawMessage(`{"director":"d-1","match_strategy":"name","plan_id":"small","reconciled_at":"2026-11-27T10:00:00Z",` +
		`"reconciler_fingerprint":"f0f1f2f3","service_id":"redis"}`)
	same := sharer{}
	var recs []*Record
	for i := range 3 {
		rec, problems := decodeRecord("p", strconv.Itoa(i), raw)
		if rec == nil || len(problems) > 0 {
			t.Fatalf("decoding: %v", problems)
		}
		same.record(rec)
		recs = append(recs, rec)
	}
	for _, r := range recs[1:] {
		for _, pair := range [][2]string{{r.ServiceID, recs[0].ServiceID}, {r.PlanID, recs[0].PlanID},
			{r.Director, recs[0].Director}, {r.MatchStrategy, recs[0].MatchStrategy}, {r.ReconciledAt, recs[0].ReconciledAt}} {
			if unsafe.StringData(pair[0]) != unsafe.StringData(pair[1]) {
				t.Fatalf("%q is not shared", pair[0])
			}
		}
		if unsafe.StringData(r.Fingerprint) == unsafe.StringData(recs[0].Fingerprint) {
			t.Fatal("a field it does not take is shared")
		}
		b, err := r.MarshalJSON()
		if err != nil || string(b) != string(raw) {
			t.Fatalf("encodes to %s (%v), want %s", b, err, raw)
		}
	}
	many := sharer{}
	for i := range 2 * maxShared {
		s := strconv.Itoa(i)
		many.of(&s)
	}
	if len(many) != maxShared {
		t.Fatalf("keeps %d strings, want at most %d", len(many), maxShared)
	}
}
