package vault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

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
	switch p := ptr.(type) { // the common kinds without reflection
	case *string:
		return *p == ""
	case *bool:
		return !*p
	case *int64:
		return *p == 0
	case *int:
		return *p == 0
	}
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

// trimSpace trims JSON's whitespace (not bytes.TrimSpace's, which takes
// more: "\f{}" is not JSON).
func trimSpace(data []byte) []byte {
	return bytes.Trim(data, " \t\r\n")
}

// snippet shortens data for an error message: 60 bytes at most, cut at a
// character boundary, "..." that marks the cut included.
func snippet(data []byte) string { return textcut.Marked(string(data), 60, "...") }
