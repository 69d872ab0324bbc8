package vault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// field binds a JSON key to a pointer to the Go field that holds it.
type field struct {
	name   string
	ptr    any
	always bool // written even when zero (no omitempty)
}

// decodeObject decodes a JSON object into the known fields and returns every
// other key, raw, in extra. A known key is kept raw in extra too when its value
// is null or the zero value (so it is written back exactly as it was), or of
// an unexpected type (then it is also named in mismatch).
func decodeObject(data []byte, fields []field) (extra map[string]json.RawMessage, mismatch []string, err error) {
	if extra, mismatch, ok := decodePairs(data, fields); ok {
		return extra, mismatch, nil
	}
	return decodeMap(data, fields)
}

// decodeMap is decodeObject through json.Unmarshal into a map: whatever
// decodePairs does not take on, and its oracle in FuzzDecodePairs.
func decodeMap(data []byte, fields []field) (extra map[string]json.RawMessage, mismatch []string, err error) {
	all := make(map[string]json.RawMessage, len(fields)+4)
	if t := trimSpace(data); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &all) != nil {
		return nil, nil, fmt.Errorf("%w: not a JSON object: %s", ErrCorrupt, snippet(data))
	}
	// What is left in all is extra; json.Unmarshal copied the raw values.
	for _, f := range fields {
		v, ok := all[f.name]
		if !ok {
			continue
		}
		if decodeKnown(v, f, &mismatch) {
			delete(all, f.name)
		}
	}
	if len(all) == 0 {
		all = nil
	}
	return all, mismatch, nil
}

// maxPairFields bounds the fields decodePairs takes on.
const maxPairFields = 32

// decodePairs is decodeObject's fast path: one pass over data (pairs), each
// value straight to its field, no map but for the extra fields; false for
// what it does not take on (see pairs), decodeObject then uses
// json.Unmarshal. (A run's index read decodes every record: a map per
// record was most of it.)
func decodePairs(data []byte, fields []field) (extra map[string]json.RawMessage, mismatch []string, ok bool) {
	if len(fields) > maxPairFields {
		return nil, nil, false
	}
	var raws [maxPairFields][]byte
	sc := pairs{data: data, validate: true}
	for {
		key, val, more := sc.next()
		if !more {
			break
		}
		if j := fieldIndex(fields, key); j >= 0 {
			raws[j] = val
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[string(key)] = bytes.Clone(val) // not a slice of data: a shard's whole answer
	}
	if !sc.ok() {
		return nil, nil, false
	}
	for j, f := range fields {
		if raws[j] == nil || decodeKnown(raws[j], f, &mismatch) {
			continue
		}
		if extra == nil {
			extra = map[string]json.RawMessage{}
		}
		extra[f.name] = bytes.Clone(raws[j])
	}
	return extra, mismatch, true
}

// fieldIndex is the index of the field named key, -1 for none.
func fieldIndex(fields []field, key []byte) int {
	for j := range fields {
		if fields[j].name == string(key) {
			return j
		}
	}
	return -1
}

// decodeKnown decodes the raw value v of a known field f; false keeps v raw
// in the extra fields: null, the field's zero value (written back as it
// was) or a value of an unexpected type (then named in *mismatch too).
func decodeKnown(v []byte, f field, mismatch *[]string) bool {
	if bytes.Equal(v, []byte("null")) {
		return false
	}
	if err := decodeField(v, f.ptr); err != nil {
		reflect.ValueOf(f.ptr).Elem().SetZero()
		*mismatch = append(*mismatch, f.name)
		return false
	}
	return !isZero(f.ptr)
}

// decodeInto is decodeObject for an UnmarshalJSON method: a known field of
// an unexpected type is kept raw in *extra without complaint.
func decodeInto(data []byte, fields []field, extra *map[string]json.RawMessage) error {
	var err error
	*extra, _, err = decodeObject(data, fields)
	return err
}

// encodeObject is the inverse of decodeObject: known fields that are set (or
// are always written) override extra, and a zero field leaves a raw value
// kept in extra alone. Keys are sorted and the output is compact, as Vault
// writes JSON, so an unchanged object encodes to the bytes Vault returns.
// It appends straight into one buffer (a run's index write over the shards
// it read encodes every record they hold); encodeObjectMap, in the tests,
// is the map-based form it is held to.
func encodeObject(fields []field, extra map[string]json.RawMessage) ([]byte, error) {
	type entry struct {
		key string
		f   *field          // a known field, or
		raw json.RawMessage // an extra value
	}
	var arr [32]entry
	ents := arr[:0]
	size := 2
	for i := range fields {
		f := &fields[i]
		zero := isZero(f.ptr)
		if _, kept := extra[f.name]; kept && zero || zero && !f.always {
			continue
		}
		ents = append(ents, entry{key: f.name, f: f})
		size += len(f.name) + 4 + encodedSize(f.ptr)
	}
	written := len(ents)
	for k, v := range extra {
		if !json.Valid(v) {
			return nil, fmt.Errorf("encoding %s: invalid raw JSON %s", k, snippet(v))
		}
		if slices.ContainsFunc(ents[:written], func(e entry) bool { return e.key == k }) {
			continue // the field's value replaces it
		}
		ents = append(ents, entry{key: k, raw: v})
		size += len(k) + len(v) + 4
	}
	slices.SortFunc(ents, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	for i, e := range ents {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, e.key)
		buf = append(buf, ':')
		if e.f == nil {
			buf = append(buf, e.raw...)
			continue
		}
		var err error
		if buf, err = appendField(buf, e.f.ptr); err != nil {
			return nil, fmt.Errorf("encoding %s: %w", e.key, err)
		}
	}
	return append(buf, '}'), nil
}

// encodedSize is about the length of a field's value encoded: exact for a
// string without characters to escape, a bound for the other scalars (a
// run's index write holds every record of the shards it writes encoded at
// once: a guess of 48 bytes a field made most of them grow to twice their
// size).
func encodedSize(ptr any) int {
	switch p := ptr.(type) {
	case *string:
		return len(*p) + 2
	case *bool:
		return 5
	case *int64, *int:
		return 20
	}
	return 64
}

// encodeEntries writes a JSON object of valid raw values, keys sorted.
func encodeEntries(m map[string]json.RawMessage) json.RawMessage {
	keys := slices.Sorted(maps.Keys(m))
	size := 2
	for _, k := range keys {
		size += len(k) + len(m[k]) + 4
	}
	buf := make([]byte, 0, size)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendString(buf, k)
		buf = append(buf, ':')
		buf = append(buf, m[k]...)
	}
	return append(buf, '}')
}

// decodeField decodes one known field, with fast paths for scalars; numbers
// inside interface values stay json.Number.
func decodeField(raw []byte, ptr any) error {
	switch p := ptr.(type) {
	case *string:
		if s, ok := plainString(raw); ok {
			*p = s
			return nil
		}
	case *bool:
		switch string(raw) {
		case "true", "false":
			*p = string(raw) == "true"
			return nil
		}
	case *int64:
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			*p = n
			return nil
		}
	case *int:
		if n, err := strconv.Atoi(string(raw)); err == nil {
			*p = n
			return nil
		}
	case *float64:
		if end, ok := numberEnd(raw, 0); ok && end == len(raw) {
			if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
				*p = f
				return nil
			}
		}
	case *map[string]string:
		if m, ok := plainStrings(raw); ok {
			*p = m
			return nil
		}
	case *map[string]any:
		return unmarshalNumbers(raw, p)
	}
	return json.Unmarshal(raw, ptr)
}

// appendField appends one known field's value, encoded like json.Marshal
// (faster for scalars), to dst.
func appendField(dst []byte, ptr any) ([]byte, error) {
	switch p := ptr.(type) {
	case *string:
		return appendString(dst, *p), nil
	case *bool:
		return strconv.AppendBool(dst, *p), nil
	case *int64:
		return strconv.AppendInt(dst, *p, 10), nil
	case *int:
		return strconv.AppendInt(dst, int64(*p), 10), nil
	}
	b, err := json.Marshal(ptr)
	return append(dst, b...), err
}

// plainString returns the content of a JSON string that has no escapes and
// only printable ASCII, the common case; ok false sends the caller to the
// full decoder.
func plainString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(raw[1 : len(raw)-1]), true
}

// plainStrings decodes an object of plain strings (see plainString), the
// common case of a map[string]string; ok false sends the caller to the full
// decoder.
func plainStrings(raw []byte) (map[string]string, bool) {
	all, ok := splitObject(raw)
	if !ok {
		return nil, false
	}
	m := make(map[string]string, len(all))
	for k, v := range all {
		if m[k], ok = plainString(v); !ok {
			return nil, false
		}
	}
	return m, true
}

// appendString appends s as a JSON string exactly as json.Marshal writes it
// (HTML characters escaped).
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
