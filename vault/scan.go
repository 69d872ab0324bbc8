package vault

import (
	"encoding/json"
)

// splitObject splits a JSON object into its keys and raw values in one pass,
// as json.Unmarshal into a map[string]json.RawMessage does (the last of
// duplicate keys wins), and validates it as that does. It is the index's
// fast path: a shard read at the start of every run holds every record, and
// json.Unmarshal scanned each of them several times. Values are slices of
// data, not copies. ok is false for anything it does not take on (a key with
// an escape, data that is not an object, invalid JSON): the caller then uses
// json.Unmarshal, which decodes it or says what is wrong.
func splitObject(data []byte) (out map[string]json.RawMessage, ok bool) {
	out, _, ok = split(data, true)
	return out, ok
}

// splitValid is splitObject for data already validated whole
// (json.Valid): nested values are not validated again. dup says a key came
// more than once.
func splitValid(data []byte) (out map[string]json.RawMessage, dup, ok bool) {
	return split(data, false)
}

func split(data []byte, validate bool) (out map[string]json.RawMessage, dup, ok bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return nil, false, false
	}
	out = make(map[string]json.RawMessage, 16)
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return out, false, skipSpace(data, i+1) == len(data)
	}
	for {
		key, next, ok := plainKey(data, i)
		if !ok {
			return nil, false, false
		}
		i = skipSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return nil, false, false
		}
		i = skipSpace(data, i+1)
		end, ok := valueEnd(data, i, validate)
		if !ok {
			return nil, false, false
		}
		if _, seen := out[key]; seen {
			dup = true
		}
		out[key] = data[i:end:end]
		i = skipSpace(data, end)
		if i >= len(data) {
			return nil, false, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case '}':
			return out, dup, skipSpace(data, i+1) == len(data)
		default:
			return nil, false, false
		}
	}
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// plainKey reads a key of ASCII without escapes at data[i]: its text and the index
// after its closing quote.
func plainKey(data []byte, i int) (string, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return string(data[i+1 : j]), j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80: // json.Unmarshal mends invalid UTF-8 in keys
			return "", 0, false
		}
	}
	return "", 0, false
}

// maxDepth bounds the nesting valueEnd validates, as json.Unmarshal
// bounds it (deeper is refused, not walked).
const maxDepth = 10000

// valueEnd returns the index just after the JSON value that starts at
// data[i], false when it is not a valid value (an object or array is only
// delimited, not validated, unless validate).
func valueEnd(data []byte, i int, validate bool) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch c := data[i]; {
	case c == '{' || c == '[':
		if validate {
			return nestedValid(data, i, 0)
		}
		return nestedEnd(data, i)
	default:
		return scalarEnd(data, i)
	}
}

// scalarEnd returns the index after the string, literal or number at
// data[i].
func scalarEnd(data []byte, i int) (int, bool) {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case 't':
		return literalEnd(data, i, "true")
	case 'f':
		return literalEnd(data, i, "false")
	case 'n':
		return literalEnd(data, i, "null")
	default:
		return numberEnd(data, i)
	}
}

// nestedValid returns the index after the object or array at data[i],
// validated through, depth levels down already.
func nestedValid(data []byte, i, depth int) (int, bool) {
	if depth >= maxDepth {
		return 0, false
	}
	closing, object := byte(']'), data[i] == '{'
	if object {
		closing = '}'
	}
	i = skipSpace(data, i+1)
	if i < len(data) && data[i] == closing {
		return i + 1, true
	}
	for {
		if object {
			if i >= len(data) || data[i] != '"' {
				return 0, false
			}
			end, ok := stringEnd(data, i)
			if !ok {
				return 0, false
			}
			if i = skipSpace(data, end); i >= len(data) || data[i] != ':' {
				return 0, false
			}
			i = skipSpace(data, i+1)
		}
		if i >= len(data) {
			return 0, false
		}
		var end int
		var ok bool
		if c := data[i]; c == '{' || c == '[' {
			end, ok = nestedValid(data, i, depth+1)
		} else {
			end, ok = scalarEnd(data, i)
		}
		if !ok {
			return 0, false
		}
		if i = skipSpace(data, end); i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case ',':
			i = skipSpace(data, i+1)
		case closing:
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// stringEnd returns the index after the JSON string at data[i].
func stringEnd(data []byte, i int) (int, bool) {
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			j++
			if j >= len(data) {
				return 0, false
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(data) {
					return 0, false
				}
				for _, h := range data[j+1 : j+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				j += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// nestedEnd returns the index after the object or array at data[i], by its
// brackets (strings skipped); the caller validates what is between.
func nestedEnd(data []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(data); j++ {
		switch data[j] {
		case '"':
			end, ok := stringEnd(data, j)
			if !ok {
				return 0, false
			}
			j = end - 1
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				return j + 1, true
			}
		}
	}
	return 0, false
}

// literalEnd returns the index after lit at data[i].
func literalEnd(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// numberEnd returns the index after the JSON number at data[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(data []byte, i int) (int, bool) {
	j := i
	if j < len(data) && data[j] == '-' {
		j++
	}
	switch {
	case j < len(data) && data[j] == '0':
		j++
	case j < len(data) && '1' <= data[j] && data[j] <= '9':
		j = digits(data, j)
	default:
		return 0, false
	}
	if j < len(data) && data[j] == '.' {
		if k := digits(data, j+1); k > j+1 {
			j = k
		} else {
			return 0, false
		}
	}
	if j < len(data) && (data[j] == 'e' || data[j] == 'E') {
		j++
		if j < len(data) && (data[j] == '+' || data[j] == '-') {
			j++
		}
		k := digits(data, j)
		if k == j {
			return 0, false
		}
		j = k
	}
	return j, true
}

// digits returns the index after the decimal digits at data[i].
func digits(data []byte, i int) int {
	for i < len(data) && '0' <= data[i] && data[i] <= '9' {
		i++
	}
	return i
}
