package vault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
)

// field binds a JSON key to a pointer to the Go field that holds it.
type field struct {
	name   string
	ptr    any
	always bool // written even when zero (no omitempty)
}

// fieldState is what decoding learned beyond the known fields: the keys that
// were present (so zero values written by others are written back as they
// were) and the fields kept raw because their JSON type was unexpected.
type fieldState struct {
	present  map[string]bool
	mismatch []string
}

// decodeObject decodes a JSON object into the known fields and returns every
// other key, raw, in extra. A known key whose value has an unexpected type (or
// is null) is kept raw in extra too, and named in state.mismatch.
func decodeObject(data []byte, fields []field) (map[string]json.RawMessage, fieldState, error) {
	var st fieldState
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil || all == nil {
		return nil, st, fmt.Errorf("%w: not a JSON object: %s", ErrCorrupt, snippet(data))
	}
	var extra map[string]json.RawMessage
	keep := func(k string, v json.RawMessage) {
		if extra == nil {
			extra = make(map[string]json.RawMessage)
		}
		extra[k] = bytes.Clone(v)
	}
	for _, f := range fields {
		v, ok := all[f.name]
		if !ok {
			continue
		}
		delete(all, f.name)
		if bytes.Equal(v, []byte("null")) {
			keep(f.name, v)
			continue
		}
		if err := unmarshalNumbers(v, f.ptr); err != nil {
			reflect.ValueOf(f.ptr).Elem().SetZero()
			keep(f.name, v)
			st.mismatch = append(st.mismatch, f.name)
			continue
		}
		if st.present == nil {
			st.present = make(map[string]bool)
		}
		st.present[f.name] = true
	}
	for k, v := range all {
		keep(k, v)
	}
	return extra, st, nil
}

// encodeObject is the inverse of decodeObject: known fields that are set (or
// were present when read, or are always written) override extra, except that
// a zero field never hides a raw value kept in extra.
func encodeObject(fields []field, extra map[string]json.RawMessage, present map[string]bool) ([]byte, error) {
	out := make(map[string]json.RawMessage, len(extra)+len(fields))
	maps.Copy(out, extra)
	for _, f := range fields {
		zero := isZero(f.ptr)
		if _, kept := extra[f.name]; kept && zero {
			continue
		}
		if !zero || f.always || present[f.name] {
			b, err := json.Marshal(f.ptr)
			if err != nil {
				return nil, fmt.Errorf("encoding %s: %w", f.name, err)
			}
			out[f.name] = b
		}
	}
	return json.Marshal(out)
}

// unmarshalNumbers decodes like json.Unmarshal but keeps numbers inside
// interface values as json.Number, so that they are written back unchanged.
func unmarshalNumbers(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after JSON value")
	}
	return nil
}

// isZero reports whether *ptr would be left out by `omitempty`.
func isZero(ptr any) bool {
	v := reflect.ValueOf(ptr).Elem()
	switch v.Kind() {
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	default:
		return v.IsZero()
	}
}

func cloneExtra(m map[string]json.RawMessage) map[string]json.RawMessage {
	if m == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = bytes.Clone(v)
	}
	return out
}

// cloneAny deep-copies a value decoded from JSON (maps, slices, scalars).
func cloneAny(v any) any {
	switch t := v.(type) {
	case map[string]any:
		return cloneMap(t)
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = cloneAny(e)
		}
		return out
	default:
		return v
	}
}

func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneAny(v)
	}
	return out
}

// snippet shortens data for an error message.
func snippet(data []byte) string {
	const limit = 60
	if len(data) > limit {
		return string(data[:limit]) + "..."
	}
	return string(data)
}
