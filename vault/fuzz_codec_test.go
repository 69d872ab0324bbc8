package vault

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// Fuzz tests of the record and metadata codec (the other parsers are in
// fuzz_test.go): run one with
// go test ./vault -run '^$' -fuzz '^FuzzRecord$' -fuzztime 60s

const fuzzShard = "secret/blacksmith/index/v1/shards/007"

// Realistic documents, in the shapes the specs store.
var (
	seedRecords = []string{
		`{"plan_id":"p","service_id":"s"}`,
		`{"created":1700000000,"created_at":"2024-01-01T00:00:00Z","instance_name":"cache-1","organization_guid":"org-1","plan":{"id":"redis-small","name":"Small"},"plan_id":"redis-small","service_id":"redis","space_guid":"space-1","status":"provisioning_completed"}`,
		`{"created":"2024-01-01","orphaned":"yes","plan_id":"p","service_id":"s"}`,
		`{"created":0,"deployment_name":"","orphaned":false,"plan_id":"p","service_id":"s","space_guid":null}`,
		`{"parameters":{"big":12345678901234567890,"f":0.1000000000000000055511151231257827},"plan_id":"p","service_id":"s"}`,
		`{"last_operation":{"state":"in progress","task_id":42,"type":"provision","x":1},"plan_id":"p","reconciler_fingerprint":"sha256:abc","service_id":"s"}`,
		`{"last_operation":{},"plan_id":"p\u003c\u0026\u003e","service_id":"s"}`,
		`{"created":1700000000.5,"plan_id":"pg-1","service_id":"pg"}`,
		`"legacy garbage"`,
		`{"service_id": broken`,
	}
	seedMetadata = []string{
		`{"history":[{"action":"created","by":"broker","time":"2024-01-01T00:00:00Z"}],"legacy":{"a":1},"releases":[{"name":"redis","sha1":"abc","version":"1"}],"vms":[{"id":"i","index":0,"job":"redis","state":"running"}]}`,
		`{"legacy_field":{"a":[1,2]},"releases":[{"name":"redis","version":"1","url":"x"}],"stemcells":[{"name":"ubuntu-jammy","version":"1.1"}],"properties":{"port":6379}}`,
		`{"history":"not a list"}`,
		`{"vms":[{"az":"z1","id":"vm-1","index":0,"ips":["10.0.0.1"],"job":"redis"}],"releases":[{}]}`,
	}
)

func FuzzRecord(f *testing.F) {
	for _, s := range seedRecords {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, problems := decodeRecord(fuzzShard, "inst-1", data)
		if rec == nil {
			checkRecordErrors(t, problems, 1)
			return
		}
		checkRecordErrors(t, problems, len(problems))
		for _, p := range problems {
			var re *RecordError
			if errors.As(p, &re); rec.Extra[re.Field] == nil {
				t.Fatalf("mistyped field %q not kept: %v", re.Field, p)
			}
		}
		out, err := rec.MarshalJSON()
		if err != nil {
			t.Fatalf("encoding a decoded record: %v", err)
		}
		checkRoundTrip(t, data, out, rec.fields())
		if old, err := encodeObjectMap(rec.fields(), rec.Extra); err != nil || !bytes.Equal(old, out) {
			t.Fatalf("encodeObject %s, the map-based form %s (%v)", out, old, err)
		}
		again, _ := decodeRecord(fuzzShard, "inst-1", out)
		if again == nil {
			t.Fatalf("re-encoded record does not decode: %s", out)
		}
		if out2, _ := again.MarshalJSON(); !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", out, out2)
		}
		stored, err := json.Marshal(rec) // what Update writes
		if err != nil || !sameJSON(stored, out) {
			t.Fatalf("json.Marshal of a record: %v: %s", err, stored)
		}
	})
}

// checkRecordErrors checks that problems are n *RecordError naming the
// path and id and matching ErrCorrupt.
func checkRecordErrors(t *testing.T, problems []error, n int) {
	t.Helper()
	if len(problems) != n {
		t.Fatalf("%d problems, want %d: %v", len(problems), n, problems)
	}
	for _, p := range problems {
		var re *RecordError
		if !errors.As(p, &re) || !errors.Is(p, ErrCorrupt) || re.Path != fuzzShard || re.ID != "inst-1" ||
			!strings.Contains(p.Error(), fuzzShard) {
			t.Fatalf("problem does not name the record or match ErrCorrupt: %#v", p)
		}
	}
}

func FuzzMetadata(f *testing.F) {
	for _, s := range seedMetadata {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var md Metadata
		if err := md.UnmarshalJSON(data); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("a decode error that is not ErrCorrupt: %v", err)
			}
			return
		}
		out, err := md.MarshalJSON()
		if err != nil {
			t.Fatalf("encoding decoded metadata: %v", err)
		}
		checkRoundTrip(t, data, out, md.fields())
		var again Metadata
		if err := again.UnmarshalJSON(out); err != nil {
			t.Fatalf("re-encoded metadata does not decode: %v", err)
		}
		if out2, _ := again.MarshalJSON(); !bytes.Equal(out, out2) {
			t.Fatalf("encoding is not stable:\n%s\n%s", out, out2)
		}
	})
}

// checkRoundTrip checks that out, the encoding of the decoded in, keeps
// every key of in: unknown ones byte for byte, known ones with the same
// meaning (known fields that are always written may be added, zero).
func checkRoundTrip(t *testing.T, in, out []byte, fields []field) {
	t.Helper()
	var a, b map[string]json.RawMessage
	if err := json.Unmarshal(in, &a); err != nil {
		t.Fatalf("decoded, yet not an object: %v", err)
	}
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("encoded, yet not an object: %v: %s", err, out)
	}
	known := map[string]bool{}
	for _, f := range fields {
		known[f.name] = true
	}
	for k, v := range a {
		w, ok := b[k]
		switch {
		case !ok:
			t.Fatalf("key %q lost: %s", k, out)
		case !known[k] && !bytes.Equal(v, w):
			t.Fatalf("unknown key %q changed: %s -> %s", k, v, w)
		case known[k] && !sameAdding(generic(t, v), generic(t, w)):
			t.Fatalf("known key %q changed meaning: %s -> %s", k, v, w)
		}
	}
	for k, w := range b {
		if _, ok := a[k]; !ok && !(alwaysWritten[k] && isZeroJSON(w)) {
			t.Fatalf("key %q added: %s", k, out)
		}
	}
}

// alwaysWritten are the known fields written even when zero: decoding and
// encoding adds them, zero, to an object that lacked them.
var alwaysWritten = map[string]bool{"service_id": true, "plan_id": true, "type": true, "state": true,
	"name": true, "version": true, "id": true, "job": true, "index": true, "time": true, "action": true}

func isZeroJSON(raw []byte) bool { return string(raw) == `""` || string(raw) == "0" }

func generic(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := unmarshalNumbers(raw, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, raw)
	}
	return v
}

// sameAdding reports whether out means what in means, but for zero-valued
// always-written fields added to objects.
func sameAdding(in, out any) bool {
	switch a := in.(type) {
	case map[string]any:
		b, ok := out.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range a {
			if w, ok := b[k]; !ok || !sameAdding(v, w) {
				return false
			}
		}
		for k, w := range b {
			if _, ok := a[k]; !ok && !(alwaysWritten[k] && (w == "" || w == json.Number("0"))) {
				return false
			}
		}
		return true
	case []any:
		b, ok := out.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !sameAdding(a[i], b[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(in, out)
}

// FuzzSplitObject: splitObject takes a JSON object as json.Unmarshal into a
// map[string]json.RawMessage does (same keys, same raw values), and never
// takes what json.Unmarshal refuses.
func FuzzSplitObject(f *testing.F) {
	for _, s := range append(seedRecords, seedMetadata...) {
		f.Add([]byte(s))
	}
	for _, s := range []string{`{}`, ` { } `, `{"a":1,"a":2}`, `{"a":-0.5e+3,"b":[1,{"c":"\u00e9\n"}],"d":null,"e":true}`,
		`{"a":01}`, `{"a":1.}`, `{"a":"\x"}`, `{"a":[1,}`, `{"a\u0062":1}`, `{"a":1}x`, `{"a":"b\u12"}`, `{"a":1,}`, "{\"a\":\"\x01\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := splitObject(data)
		var want map[string]json.RawMessage
		err := json.Unmarshal(data, &want)
		if !ok {
			return // the caller falls back to json.Unmarshal
		}
		if err != nil {
			t.Fatalf("splitObject took %q, which json.Unmarshal refuses: %v", data, err)
		}
		if want == nil || len(got) != len(want) {
			t.Fatalf("splitObject(%q) = %q, json.Unmarshal %q", data, got, want)
		}
		for k, v := range want {
			if !bytes.Equal(got[k], v) {
				t.Fatalf("splitObject(%q)[%q] = %q, json.Unmarshal %q", data, k, got[k], v)
			}
		}
	})
}

// FuzzDecodeV2: the fast path of a KV v2 answer decodes what json.Unmarshal
// decodes (the same entries, version and existence), and takes nothing that
// json.Unmarshal refuses.
func FuzzDecodeV2(f *testing.F) {
	f.Add([]byte(`{"request_id":"r","data":{"data":{"inst-1":{"plan_id":"p","service_id":"s"}},"metadata":{"created_time":"2024-01-01T00:00:00Z","version":3}},"warnings":null}`))
	f.Add([]byte(`{"data":{"data":null,"metadata":{"deletion_time":"2024-01-01T00:00:00Z","version":2}}}`))
	f.Add([]byte(`{"data":{"data":{},"metadata":{"version":1}}}`))
	f.Add([]byte(`{"Data":{"data":{"a":1},"metadata":{"version":1}}}`))
	f.Add([]byte(`{"data":{"data":{"a":1},"data":{"b":2},"metadata":{"version":1}}}`))
	f.Add([]byte(`{"data":{"data":{"a":1},"metadata":{"version":1.0}}}`))
	f.Add([]byte(`{"data":{"data":{"a":[1,{"b":"\u00e9"}]},"metadata":{"version":12}},"auth":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, ok := decodeV2(body)
		if !ok {
			return // json.Unmarshal decides
		}
		var b v2Body
		if err := json.Unmarshal(body, &b); err != nil || b.Data == nil {
			t.Fatalf("decodeV2 took %q, which json.Unmarshal refuses: %v", body, err)
		}
		if doc.Version != b.Data.Metadata.Version || doc.Exists != (b.Data.Data != nil) || len(doc.Data) != len(b.Data.Data) ||
			doc.Created != string(b.Data.Metadata.Created) {
			t.Fatalf("decodeV2(%q) = %+v, json.Unmarshal %+v", body, doc, *b.Data)
		}
		for k, v := range b.Data.Data {
			if !bytes.Equal(doc.Data[k], v) {
				t.Fatalf("decodeV2(%q)[%q] = %q, json.Unmarshal %q", body, k, doc.Data[k], v)
			}
		}
	})
}

// FuzzDecodePairs: a record decoded in one pass (decodePairs) is the record
// json.Unmarshal's way decodes (decodeMap): the same fields, extra fields
// and mismatches.
func FuzzDecodePairs(f *testing.F) {
	for _, s := range seedRecords {
		f.Add([]byte(s))
	}
	f.Add([]byte(`{"plan_id":"a","plan_id":"b","x":1,"x":2,"context":{"k":"v","k":"w"},"match_confidence":1e400}`))
	f.Add([]byte(`{"match_confidence":-0.0,"created":-1,"adopted":true,"context":{"a":"\u00e9"},"director":""}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast, slow Record
		fe, fm, ok := decodePairs(data, fast.fields())
		if !ok {
			return
		}
		se, sm, err := decodeMap(data, slow.fields())
		if err != nil {
			t.Fatalf("decodePairs took %q, which decodeMap refuses: %v", data, err)
		}
		fast.Extra, slow.Extra = fe, se
		if !reflect.DeepEqual(fast, slow) || !reflect.DeepEqual(fm, sm) {
			t.Fatalf("decodePairs(%q) = %+v %v, decodeMap %+v %v", data, fast, fm, slow, sm)
		}
	})
}

// FuzzSameVersion: IndexFrom's reading of a KV v2 metadata answer never
// panics, and says "the same version" only for an answer that names the
// version kept and holds its creation time.
func FuzzSameVersion(f *testing.F) {
	f.Add([]byte(`{"data":{"current_version":3,"versions":{"3":{"created_time":"2026-11-27T09:00:00.123456789Z","deletion_time":"","destroyed":false}}}}`))
	f.Add([]byte(`{"data":{"current_version":3,"versions":{"3":{"created_time":"2026-11-27T09:00:00.123456789Z","deletion_time":"2026-11-28T00:00:00Z"}}}}`))
	f.Add([]byte(`{"data":{"current_version":3,"versions":{"3":{"created_time":"2026-11-27T09:00:00.123456789Z","destroyed":true}}}}`))
	f.Add([]byte(`{"data":{"current_version":4,"versions":{}}}`))
	f.Add([]byte(`{"data":null}`))
	f.Add([]byte(`[1,2`))
	kept := &seenShard{version: 3, created: `"2026-11-27T09:00:00.123456789Z"`}
	f.Fuzz(func(t *testing.T, body []byte) {
		same, err := sameVersion(body, kept)
		if err != nil {
			if same || !errors.Is(err, ErrCorrupt) {
				t.Fatalf("sameVersion(%q) = %v, %v", body, same, err)
			}
			return
		}
		if same && (!bytes.Contains(body, []byte(kept.created)) || !bytes.Contains(body, []byte("3"))) {
			t.Fatalf("sameVersion(%q) took a version that the answer does not name", body)
		}
		if again, _ := sameVersion(body, kept); again != same {
			t.Fatalf("sameVersion(%q) is not stable", body)
		}
	})
}
