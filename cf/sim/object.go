package sim

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// object is a JSON object that keeps its keys in the order they were
// added, as a Ruby hash does: CC's decorators write included resources and
// their fields in their own order.
type object []member

type member struct {
	key   string
	value any
}

// MarshalJSON writes the members in order.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// view is a fields decorator's view of one resource: of the fields asked
// for, in the decorator's order, each value from values; a field
// "relationships.X" is written as {"relationships": {X: {"data": {"guid"}}}}
// with the guid values holds for it.
func view(asked, order []string, values map[string]any) object {
	o := object{}
	for _, f := range order {
		if !slices.Contains(asked, f) {
			continue
		}
		if rel, ok := strings.CutPrefix(f, "relationships."); ok {
			o = append(o, member{"relationships", object{{rel, relation{guidRef{values[f].(string)}}}}})
			continue
		}
		o = append(o, member{f, values[f]})
	}
	return o
}
