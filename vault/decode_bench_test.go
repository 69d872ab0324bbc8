package vault

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkDecodeShard decodes a shard of 100 records as a run's index read
// does (the answer's layers, then each record):
// go test ./vault -run '^$' -bench DecodeShard
func BenchmarkDecodeShard(b *testing.B) {
	entries := benchShard()
	data, _ := json.Marshal(entries)
	body := []byte(`{"request_id":"r","lease_id":"","renewable":false,"lease_duration":0,"data":{"data":` + string(data) +
		`,"metadata":{"created_time":"2026-11-27T09:00:00Z","custom_metadata":null,"deletion_time":"","destroyed":false,"version":7}},"wrap_info":null,"warnings":null,"auth":null,"mount_type":"kv"}`)
	k := &kv{version: 2}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		doc, err := k.decode(body)
		if err != nil || len(doc.Data) != 100 {
			b.Fatal(err, len(doc.Data))
		}
		for id, raw := range doc.Data {
			if rec, _ := decodeRecord("p", id, raw); rec == nil {
				b.Fatal(id)
			}
		}
	}
}

// benchShard is a shard of 100 records as a reconciler writes them.
func benchShard() map[string]*Record {
	entries := map[string]*Record{}
	for i := range 100 {
		entries[fmt.Sprintf("%08d-aaaa-bbbb-cccc-dddddddddddd", i)] = &Record{ServiceID: "redis", PlanID: "redis-small",
			DeploymentName: fmt.Sprintf("redis-small-%08d-aaaa-bbbb-cccc-dddddddddddd", i), Created: 1764000000,
			ReconciledAt: "2026-11-27T09:00:00Z", Fingerprint: fmt.Sprintf("%064d", i), MatchStrategy: "name",
			MatchConfidence: 0.9, Director: "director-1", Context: map[string]string{"platform": "cloudfoundry"}}
	}
	return entries
}

// BenchmarkEncodeShard encodes the records of a shard of 100, as a run's
// index write over a shard it read does (Index.take):
// go test ./vault -run '^$' -bench EncodeShard
func BenchmarkEncodeShard(b *testing.B) {
	entries := benchShard()
	b.ReportAllocs()
	for b.Loop() {
		for id, rec := range entries {
			if out, err := rec.MarshalJSON(); err != nil || len(out) == 0 {
				b.Fatal(id, err)
			}
		}
	}
}
