package vault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
)

// encodeObjectMap is encodeObject as it was first written, through a map:
// the oracle the faster encodeObject is held to.
func encodeObjectMap(fields []field, extra map[string]json.RawMessage) ([]byte, error) {
	out := make(map[string]json.RawMessage, len(extra)+len(fields))
	for k, v := range extra {
		if !json.Valid(v) {
			return nil, fmt.Errorf("encoding %s: invalid raw JSON %s", k, snippet(v))
		}
		out[k] = v
	}
	for _, f := range fields {
		zero := isZeroReflect(f.ptr)
		if _, kept := extra[f.name]; kept && zero {
			continue
		}
		if !zero || f.always {
			b, err := encodeFieldAsFirst(f.ptr)
			if err != nil {
				return nil, fmt.Errorf("encoding %s: %w", f.name, err)
			}
			out[f.name] = b
		}
	}
	return encodeEntries(out), nil
}

// isZeroReflect is isZero as first written, by reflection alone.
func isZeroReflect(ptr any) bool {
	v := reflect.ValueOf(ptr).Elem()
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	default:
		return v.IsZero()
	}
}

// encodeFieldAsFirst is the encoding of one field as first written.
func encodeFieldAsFirst(ptr any) ([]byte, error) {
	switch p := ptr.(type) {
	case *string:
		return appendString(nil, *p), nil
	case *bool:
		return strconv.AppendBool(nil, *p), nil
	case *int64:
		return strconv.AppendInt(nil, *p, 10), nil
	case *int:
		return strconv.AppendInt(nil, int64(*p), 10), nil
	}
	return json.Marshal(ptr)
}

// TestEncodeObjectAsMap: records with every kind of field set or not, and
// extra values beside or under known names (zero or not), encode to the
// bytes the map-based form gives.
func TestEncodeObjectAsMap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 28))
	pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
	extras := []string{"service_id", "plan_id", "created", "orphaned", "match_confidence", "context", "zz", "aa", "x<y", "é"}
	for i := range 3000 {
		rec := &Record{ServiceID: pick("", "redis", "a\"b"), PlanID: pick("", "small"), DeploymentName: pick("", "small-1"),
			Created: int64(r.IntN(3)) * 1700000000, Orphaned: r.IntN(2) == 0, MatchConfidence: []float64{0, 1, 0.9, 1e21}[r.IntN(4)],
			Fingerprint: pick("", "sha256:ab"), Director: pick("", "<b>", "é"), Adopted: r.IntN(2) == 0}
		if r.IntN(3) == 0 {
			rec.Parameters = map[string]any{"n": json.Number("1.50"), "s": "v"}
		}
		if r.IntN(3) == 0 {
			rec.Context = map[string]string{"space_name": pick("", "dev")}
		}
		if r.IntN(3) == 0 {
			rec.LastOperation = &Operation{Type: "update", State: pick("", OperationSucceeded), TaskID: r.IntN(2)}
			if r.IntN(2) == 0 {
				rec.LastOperation.Extra = map[string]json.RawMessage{"state": json.RawMessage(`"x"`), "k": json.RawMessage(`[1]`)}
			}
		}
		if r.IntN(2) == 0 {
			rec.Extra = map[string]json.RawMessage{}
			for range r.IntN(4) {
				rec.Extra[extras[r.IntN(len(extras))]] = json.RawMessage(pick(`null`, `0`, `false`, `""`, `"kept"`, `{"a":1}`))
			}
		}
		got, err := rec.MarshalJSON()
		want, werr := encodeObjectMap(rec.fields(), rec.Extra)
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Fatalf("case %d: encodeObject %s (%v), the map-based form %s (%v)", i, got, err, want, werr)
		}
	}
	if _, err := encodeObject((&Record{}).fields(), map[string]json.RawMessage{"k": json.RawMessage(`{`)}); err == nil {
		t.Fatal("invalid extra JSON encoded")
	}
}
