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
	out = make(map[string]json.RawMessage, 16)
	sc := pairs{data: data, validate: validate}
	for {
		key, val, more := sc.next()
		if !more {
			break
		}
		k := string(key)
		if _, seen := out[k]; seen {
			dup = true
		}
		out[k] = val
	}
	if !sc.ok() {
		return nil, false, false
	}
	return out, dup, true
}

// pairs walks the keys and values of a JSON object, one pass, without
// building a map (a record's fields go straight to their Go fields). Keys
// are ASCII without escapes (see plainKey), values slices of data. After
// next says false, ok says whether the whole of data was a valid object.
type pairs struct {
	data     []byte
	validate bool // validate nested objects and arrays (else only delimit them)
	i        int
	started  bool
	done     bool
	bad      bool
}

// next returns the next key and value; false at the end or on an error.
func (p *pairs) next() (key, val []byte, ok bool) {
	if p.done || p.bad {
		return nil, nil, false
	}
	data := p.data
	i := p.i
	if !p.started {
		p.started = true
		if i = skipSpace(data, 0); i >= len(data) || data[i] != '{' {
			return p.fail()
		}
		if i = skipSpace(data, i+1); i < len(data) && data[i] == '}' {
			return p.finish(i)
		}
	}
	k, next, ok := plainKey(data, i)
	if !ok {
		return p.fail()
	}
	if i = skipSpace(data, next); i >= len(data) || data[i] != ':' {
		return p.fail()
	}
	i = skipSpace(data, i+1)
	end, ok := valueEnd(data, i, p.validate)
	if !ok {
		return p.fail()
	}
	key, val = k, data[i:end:end]
	if i = skipSpace(data, end); i >= len(data) {
		return p.fail()
	}
	switch data[i] {
	case ',':
		p.i = skipSpace(data, i+1)
	case '}':
		p.finish(i)
	default:
		return p.fail()
	}
	return key, val, true
}

// finish ends the walk at the closing brace at i: nothing may follow it.
func (p *pairs) finish(i int) ([]byte, []byte, bool) {
	p.done = true
	p.bad = skipSpace(p.data, i+1) != len(p.data)
	return nil, nil, false
}

func (p *pairs) fail() ([]byte, []byte, bool) {
	p.bad = true
	return nil, nil, false
}

// ok says whether the walk reached the object's end with nothing wrong.
func (p *pairs) ok() bool { return p.done && !p.bad }

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
func plainKey(data []byte, i int) ([]byte, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return data[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80: // json.Unmarshal mends invalid UTF-8 in keys
			return nil, 0, false
		}
	}
	return nil, 0, false
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
