package broker

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"unicode/utf8"
)

// checkJSON says whether body is one JSON object nesting at most maxDepth.
func checkJSON(body []byte, maxDepth int) *requestError {
	if !json.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v)
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se) && se.Offset >= int64(len(bytes.TrimRight(body, " \t\r\n"))):
			return badInput("the request body is not valid JSON: it ends before its last value does")
		case errors.As(err, &se) && se.Offset > 0:
			return badInput("the request body is not valid JSON: %q at byte %d is out of place", body[se.Offset-1], se.Offset)
		}
		return badInput("the request body is not valid JSON")
	}
	if t := bytes.TrimSpace(body); t[0] != '{' {
		return badInput("the request body must be a JSON object")
	}
	if d := depthOf(body); d > maxDepth {
		return badInput("the request body nests %d levels deep; this broker accepts at most %d", d, maxDepth)
	}
	return nil
}

// depthOf is how deeply valid JSON nests: 0 for a scalar, 1 for an object
// or list of scalars. It does not recurse.
func depthOf(data []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range data {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// typeError turns a JSON decoding error into a sentence naming the field
// and the JSON type it takes, without Go's type names.
func typeError(err error) *requestError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return badInput("field %s must be %s", te.Field, jsonKind(te.Type))
	}
	return badInput("the request body does not have the fields of an OSB request")
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Float64, reflect.Float32, reflect.Uint, reflect.Uint64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "an object"
}

// checkStrings bounds the length of every string field of a decoded request
// and refuses control characters in them (they end up in Vault records and logs).
func checkStrings(v reflect.Value, path string) *requestError {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return checkStrings(v.Elem(), path)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			if err := checkStrings(v.Field(i), join(path, name)); err != nil {
				return err
			}
		}
	case reflect.String:
		s := v.String()
		if len(s) > maxFieldLength {
			return badInput("field %s is %d characters; at most %d are accepted", path, len(s), maxFieldLength)
		}
		if !utf8.ValidString(s) || strings.ContainsFunc(s, isControl) {
			return badInput("field %s holds control characters or invalid UTF-8", path)
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) }
