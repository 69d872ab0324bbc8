package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// Fuzz tests of every parser of what Vault returns: run one with
// go test ./vault -run '^$' -fuzz '^FuzzRecord$' -fuzztime 60s

func FuzzShard(f *testing.F) {
	f.Add([]byte(`{"inst-1":`+seedRecords[1]+`,"inst-2":`+seedRecords[0]+`}`), uint16(7))
	f.Add([]byte(`{"bad-json":"{\"service_id\": broken","bad-type":{"orphaned":"yes","plan_id":"p","service_id":"s"},"misplaced":{"plan_id":"p","service_id":"s"}}`), uint16(0))
	f.Add([]byte(`{}`), uint16(127))
	f.Fuzz(func(t *testing.T, data []byte, num uint16) {
		var entries map[string]json.RawMessage // as kv.decode hands a shard over
		if json.Unmarshal(data, &entries) != nil || entries == nil {
			return
		}
		k := &kv{mount: "secret", version: 2}
		docs := &indexDocs{kv: k}
		batch := &batcher{kv: k, docs: docs, maxRecordBytes: DefaultMaxRecordBytes}
		sh := &shard{count: DefaultShards, num: int(num) % DefaultShards, path: ShardPath(int(num) % DefaultShards), entries: entries, version: 3}
		idx := &Index{Records: map[string]*Record{}}
		docs.collect(idx, sh)
		named := map[string]bool{}
		for _, p := range idx.Problems {
			var re *RecordError
			if !errors.As(p, &re) || !errors.Is(p, ErrCorrupt) || re.Path != "secret/"+sh.path || entries[re.ID] == nil {
				t.Fatalf("problem does not name a record of the shard: %v", p)
			}
			named[re.ID] = true
		}
		for id := range entries {
			if idx.Records[id] == nil && !named[id] {
				t.Fatalf("record %q neither read nor reported", id)
			}
		}

		// One change: every other record is written back byte for byte.
		target := "inst-new"
		if ids := slices.Sorted(maps.Keys(entries)); len(ids) > 0 {
			target = ids[len(ids)/2]
		}
		touch := func(cur *Record) (*Record, error) {
			if cur == nil {
				cur = &Record{ServiceID: "s", PlanID: "p"}
			}
			cur.ReconciledAt = "2030-01-01T00:00:00Z"
			return cur, nil
		}
		p, err := batch.plan(sh, []string{target}, map[string]edit{target: {change: touch}})
		if err != nil {
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), target) {
				t.Fatalf("planning a change: %v", err)
			}
			return
		}
		var written map[string]json.RawMessage
		if err := json.Unmarshal(encodeEntries(p.next), &written); err != nil {
			t.Fatalf("the shard as written is not an object: %v", err)
		}
		for id, raw := range entries {
			if id != target && !bytes.Equal(written[id], raw) {
				t.Fatalf("untouched record %q changed: %s -> %s", id, raw, written[id])
			}
		}
		if len(p.changed) == 1 {
			rec, _ := decodeRecord(fuzzShard, target, written[target])
			if rec == nil || rec.ReconciledAt != "2030-01-01T00:00:00Z" {
				t.Fatalf("changed record %q not written: %s", target, written[target])
			}
			if oldRec, _ := decodeRecord(fuzzShard, target, entries[target]); oldRec != nil {
				// Written compact, HTML escaped, as Vault returns JSON.
				for k, v := range oldRec.Extra {
					if k != "reconciled_at" && !bytes.Equal(rec.Extra[k], canonical(t, v)) {
						t.Fatalf("field %q of %q changed: %s -> %s", k, target, v, rec.Extra[k])
					}
				}
			}
		}
	})
}

// canonical is raw as json.Marshal writes it: compact, HTML escaped.
func canonical(t *testing.T, raw []byte) []byte {
	t.Helper()
	var compact, out bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	json.HTMLEscape(&out, compact.Bytes())
	return out.Bytes()
}

func FuzzLayout(f *testing.F) {
	f.Add([]byte(`{"layout_version":1,"shards":128,"hash":"sha256-be32","created_at":"2024-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"layout_version":1,"shards":128,"hash":"sha256-be32","migrated_from":"secret/db","migrated_records":2003}`))
	f.Add([]byte(`{"layout_version":"one","shards":128}`))
	f.Add([]byte(`{"layout_version":9,"shards":128,"hash":"sha256-be32"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc map[string]json.RawMessage
		if json.Unmarshal(data, &doc) != nil || doc == nil {
			return
		}
		const path = "secret/blacksmith/index/meta"
		l, err := parseLayout(path, doc)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupportedLayout) || !strings.Contains(err.Error(), path) {
				t.Fatalf("layout error that does not say what and where: %v", err)
			}
			return
		}
		if l.Version != LayoutVersion || l.Shards < 1 || l.Shards > maxShards || l.Hash != hashName {
			t.Fatalf("accepted a layout this build cannot use: %+v", l)
		}
	})
}

func FuzzKVResponse(f *testing.F) {
	f.Add([]byte(`{"request_id":"r","data":{"data":{"inst-1":{"plan_id":"p","service_id":"s"}},"metadata":{"created_time":"2024-01-01T00:00:00Z","deletion_time":"","destroyed":false,"version":3}},"warnings":null}`), uint8(2))
	f.Add([]byte(`{"data":null,"warnings":null}`), uint8(2))
	f.Add([]byte(`{"data":{"data":null,"metadata":{"deletion_time":"2024-01-01T00:00:00Z","version":2}}}`), uint8(2))
	f.Add([]byte(`{"errors":[]}`), uint8(2))
	f.Add([]byte(`{"errors":["no handler for route \"kv9/data/x\". route entry not found."]}`), uint8(2))
	f.Add([]byte(`{"request_id":"r","lease_duration":2764800,"data":{"manifest":"name: x\n"},"warnings":null}`), uint8(1))
	f.Add([]byte(`{"data":{"keys":["binding-ids","bindings/","credentials","manifest","metadata"]}}`), uint8(1))
	f.Add([]byte(`<html>502 Bad Gateway</html>`), uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, v uint8) {
		k := &kv{mount: "secret", version: 1 + int(v%2)}
		if doc, err := k.decode(body); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error that is not ErrCorrupt: %v", err)
			}
		} else if doc.Exists != (doc.Data != nil) || k.version == 1 && !doc.Exists || k.version == 2 && doc.Version < 1 {
			t.Fatalf("decoded a document that is not one: %+v", doc)
		}
		if doc, err := k.absent(body); err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("404 error that is not ErrInvalid: %v", err)
			}
		} else if doc.Exists || doc.Data != nil || k.version == 1 && doc.Version != 0 {
			t.Fatalf("an absent document that exists: %+v", doc)
		}
		keys, err := decodeKeys(body)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("list error that is not ErrCorrupt: %v", err)
		}
		for _, key := range keys {
			p := "inst-1/" + key
			if validKey(key) && (validPath(strings.TrimSuffix(p, "/")) != nil || !strings.HasPrefix(p, "inst-1/")) {
				t.Fatalf("listed key %q accepted, yet %q leaves the folder", key, p)
			}
		}
	})
}

func FuzzBackup(f *testing.F) {
	f.Add([]byte(`{"instance_id":"inst-1","manifest":"name: x\n","metadata":{"history":[{"action":"updated","detail":"small","time":"2024-01-01T00:00:00Z"}],"releases":[{"name":"redis","version":"small"}]},"record":{"deployment_name":"small-x","plan_id":"small","service_id":"svc"},"taken_at":"2024-01-01T00:00:00.5Z"}`))
	f.Add([]byte(`{"instance_id":"inst-1","record":{"plan_id":"p","service_id":"s"},"removal":true,"secrets":{"inst-1/binding-ids":{"ids":["b1"]},"inst-1/bindings/b1":{"app_guid":"a","credentials":{"password":"pw"}},"inst-1/credentials":{"password":"p\u003cw","port":6379}},"taken_at":"2024-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"instance_id":"inst-1","removal":true,"carried_from":"1700000000","carried":["inst-1/credentials"],"secrets":{}}`))
	f.Add([]byte(`{"metadata":5,"manifest":5,"record":5}`))
	f.Add([]byte(`{"secrets":{"inst-2/credentials":{"password":"x"},"inst-1/metadata":{},"inst-1/../x":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc map[string]json.RawMessage // as kv.decode hands a backup over
		if json.Unmarshal(data, &doc) != nil || doc == nil {
			return
		}
		const path = "secret/inst-1/backups/1700000000"
		b, err := decodeBackup(path, "inst-1", "backups", doc)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "cannot be restored") {
				t.Fatalf("backup error that does not say what and where: %v", err)
			}
			return
		}
		for _, part := range []struct {
			key string
			set bool
		}{{"metadata", b.metadata != nil}, {"manifest", b.manifest != nil}, {"record", b.record != nil}, {"secrets", b.secrets != nil}} {
			if _, ok := doc[part.key]; ok != part.set {
				t.Fatalf("part %s present %v, decoded %v", part.key, ok, part.set)
			}
		}
		for p, raw := range b.secrets {
			if instanceSecret("inst-1", "backups", p) != nil || !strings.HasPrefix(p, "inst-1/") {
				t.Fatalf("secret %q accepted, yet not one of the instance", p)
			}
			var m map[string]json.RawMessage
			if json.Unmarshal(raw, &m) != nil || m == nil {
				t.Fatalf("secret %q accepted, yet not an object: %s", p, raw)
			}
		}
		// What Restore writes, backed up again, decodes to the same parts.
		st := &state{record: b.record, secrets: b.secrets}
		if b.metadata != nil {
			st.metadata, _ = b.metadata.MarshalJSON()
		}
		if b.manifest != nil {
			st.manifest, _ = json.Marshal(*b.manifest)
		}
		again, err := decodeBackup(path, "inst-1", "backups", st.document("inst-1"))
		if err != nil {
			t.Fatalf("a backup of the restored state does not decode: %v", err)
		}
		if !bytes.Equal(again.record, b.record) || !reflect.DeepEqual(again.manifest, b.manifest) ||
			!maps.EqualFunc(again.secrets, b.secrets, func(x, y json.RawMessage) bool { return bytes.Equal(x, y) }) {
			t.Fatalf("parts changed on a second backup")
		}
		if m1, m2 := marshalOrNil(b.metadata), marshalOrNil(again.metadata); !bytes.Equal(m1, m2) {
			t.Fatalf("metadata changed on a second backup:\n%s\n%s", m1, m2)
		}
	})
}

func marshalOrNil(md *Metadata) []byte {
	if md == nil {
		return nil
	}
	b, _ := md.MarshalJSON()
	return b
}

func FuzzEvent(f *testing.F) {
	f.Add([]byte(`{"time":"2026-11-23T13:20:00.123456789Z","kind":"drift","actor":"reconciler","run_id":"a1b2","deployment":"redis-i1","message":"manifest differs","details":{"manifest_sha256":"abc"}}`), "20261123T132000.123456789Z-drift-0a1f")
	f.Add([]byte(`{"time":"2026-11-23T14:20:00.123456789+01:00","kind":"restored","details":{"backup":"1700000000-2"}}`), "")
	f.Add([]byte(`{"time":"yesterday","kind":"drift"}`), "20261123T132000.000000000Z-drift-0000")
	f.Add([]byte(`{"time":"2026-11-23T13:20:00Z","kind":"Drift","details":{"n":5}}`), "")
	f.Add([]byte(`{"time":"2026-11-23T13:20:00Z","kind":"created","details":{"a/b":"x"}}`), "20261123T132000.000000000Z-updated-0000")
	f.Fuzz(func(t *testing.T, data []byte, nameText string) {
		var doc map[string]json.RawMessage // as kv.decode hands an event over
		if json.Unmarshal(data, &doc) != nil || doc == nil {
			return
		}
		name, ok := parseEventName(nameText)
		if !ok { // name it after what it holds, so that decoding can succeed
			var head struct {
				Time time.Time `json:"time"`
				Kind string    `json:"kind"`
			}
			_ = json.Unmarshal(data, &head)
			name = eventName{time: head.Time.UTC(), kind: head.Kind, suffix: "0000"}
		}
		const path = "secret/blacksmith/history/i1/x"
		e, err := decodeEvent(path, name, doc)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("event error that does not say what and where: %v", err)
			}
			return
		}
		if e.check() != nil || !e.Time.Equal(name.time) || e.Kind != name.kind {
			t.Fatalf("accepted an event unlike its name or its bounds: %+v", e)
		}
		if again, err := e.normalized(); err != nil || !reflect.DeepEqual(again, e) {
			t.Fatalf("an event read back is not stored as read: %v\n%+v\n%+v", err, e, again)
		}
		raw, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("encoding an event read back: %v", err)
		}
		var written map[string]json.RawMessage
		_ = json.Unmarshal(raw, &written)
		if back, err := decodeEvent(path, name, written); err != nil || !reflect.DeepEqual(back, e) {
			t.Fatalf("an event written again reads differently: %v\n%+v\n%+v", err, e, back)
		}
	})
}

func FuzzRunEntry(f *testing.F) {
	f.Add([]byte(`{"run_id":"a1b2c3","started_at":"2026-11-23T13:20:00Z","summary":{"changed":2,"errors":[]}}`), "20261123T132000.000000000Z-a1b2c3")
	f.Add([]byte(`{"run_id":"a1b2c3","started_at":"2026-11-23T13:20:00Z","summary":null}`), "")
	f.Add([]byte(`{"run_id":"other","started_at":"2026-11-23T13:20:00Z"}`), "20261123T132000.000000000Z-a1b2c3")
	f.Add([]byte(`{"run_id":5,"started_at":"now"}`), "")
	f.Fuzz(func(t *testing.T, data []byte, nameText string) {
		var doc map[string]json.RawMessage
		if json.Unmarshal(data, &doc) != nil || doc == nil {
			return
		}
		name, ok := parseRunName(nameText)
		if !ok {
			var head RunEntry
			_ = json.Unmarshal(data, &head)
			name = runName{time: head.StartedAt.UTC(), id: head.ID}
		}
		const path = "secret/blacksmith/runs/x"
		e, err := decodeRun(path, name, doc)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) {
				t.Fatalf("run error that does not say what and where: %v", err)
			}
			return
		}
		if e.ID != name.id || !e.StartedAt.Equal(name.time) || len(e.Summary) > MaxRunSummaryBytes {
			t.Fatalf("accepted a run unlike its name or its bounds: %+v", e)
		}
		if e.Summary != nil && !json.Valid(e.Summary) {
			t.Fatalf("a summary that is not JSON: %s", e.Summary)
		}
	})
}

func FuzzDocNames(f *testing.F) {
	for _, s := range []string{
		"20261123T132000.123456789Z-drift-0a1f", "20261123T132000.123456789Z-a1b2c3", "20261123T132000.123456789Z",
		"20261123T132000.12345678Z-drift-0a1f", "20261123T132000.123456789Z-drift-0A1F", "20261123T132000.123456789Z-x-y-z",
		"20260230T132000.000000000Z-a", "quarantine", "../x", "a/b", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n, ok := parseEventName(s); ok {
			if n.String() != s || !eventKind.MatchString(n.kind) || validPath(historyFolder("i1")+s) != nil {
				t.Fatalf("event name %q accepted, yet written %q", s, n.String())
			}
		}
		if n, ok := parseRunName(s); ok {
			if n.String() != s || validRunID(n.id) != nil || validPath(runsRoot+s) != nil {
				t.Fatalf("run name %q accepted, yet written %q", s, n.String())
			}
		}
		if ts, ok := parseStamp(s); ok && (stamp(ts) != s || stampable("t", ts) != nil) {
			t.Fatalf("stamp %q accepted, yet written %q", s, stamp(ts))
		}
		if validStateName(s) == nil && validPath(stateRoot+s) != nil {
			t.Fatalf("state name %q accepted, yet it leaves its folder", s)
		}
		if validRunID(s) == nil && (strings.ContainsAny(s, "/.") || validPath(runsRoot+"x-"+s) != nil) {
			t.Fatalf("run id %q accepted, yet it is no single segment", s)
		}
	})
}

func FuzzState(f *testing.F) {
	f.Add([]byte(`{"value":{"instances":{"i1":"drift"}},"updated_at":"2026-11-23T13:20:00Z"}`))
	f.Add([]byte(`{"value":{"instances":"no"}}`))
	f.Add([]byte(`{"other":1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc map[string]json.RawMessage
		if json.Unmarshal(data, &doc) != nil || doc == nil {
			return
		}
		const path = "secret/blacksmith/state/q"
		var v struct {
			Instances map[string]string `json:"instances"`
		}
		if err := decodeState(path, doc, &v); err != nil && (!errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path)) {
			t.Fatalf("state error that does not say what and where: %v", err)
		}
	})
}
