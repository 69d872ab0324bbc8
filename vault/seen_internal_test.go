package vault

import (
	"encoding/json"
	"testing"
)

// take gives a shard out only when the records decoded encode back to the
// bytes read, and only once.
func TestTakeChecksWhatWasRead(t *testing.T) {
	rec := &Record{ServiceID: "s", PlanID: "p"}
	raw, _ := json.Marshal(rec)
	entries := map[string]json.RawMessage{"a": raw}
	newIndex := func(r *Record) *Index {
		idx := &Index{Records: map[string]*Record{"a": r}, seen: &seenShards{count: 8, by: map[int]*seenShard{}}}
		idx.remember(&shard{count: 8, num: 3, entries: entries, version: 5, exists: true}, true)
		return idx
	}
	idx := newIndex(rec)
	sh := idx.take(8, 3)
	if sh == nil || sh.version != 5 || string(sh.entries["a"]) != string(raw) || sh.path != shardPath(8, 3) {
		t.Fatalf("take = %+v, want shard 3 at version 5 holding %s", sh, raw)
	}
	if again := idx.take(8, 3); again != nil {
		t.Fatalf("given out twice: %+v", again)
	}
	if other := newIndex(rec).take(16, 3); other != nil {
		t.Fatalf("given out for another shard count: %+v", other)
	}
	changed := &Record{ServiceID: "s", PlanID: "q"} // not what was read
	if sh := newIndex(changed).take(8, 3); sh != nil {
		t.Fatalf("given out though its record encodes to other bytes: %+v", sh)
	}
	idx = &Index{Records: map[string]*Record{"a": rec}, seen: &seenShards{count: 8, by: map[int]*seenShard{}}}
	idx.remember(&shard{count: 8, num: 3, entries: entries, version: 5}, false)
	idx.remember(&shard{count: 8, num: 4, entries: entries, version: 5, movedTo: 16}, true)
	if len(idx.seen.by) != 0 {
		t.Fatalf("kept a shard with a problem or moved: %v", idx.seen.by)
	}
}
