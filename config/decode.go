package config

import (
	"fmt"
	"reflect"

	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.Node tree onto a struct, guided by the struct's yaml
// tags, and records every problem instead of stopping at the first.
// A null value (a key with nothing after it) leaves the default in place.
type decoder struct {
	problems *Problems
	// lines records the line of every dotted key the file set.
	lines map[string]int
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func describe(n *yaml.Node) string {
	switch {
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case isNull(n):
		return "null"
	}
	return fmt.Sprintf("%q", n.Value)
}

func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	n = resolve(n)
	if isNull(n) {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		d.mapping(n, v, path)
		return
	case reflect.Slice:
		d.sequence(n, v, path)
		return
	case reflect.Map:
		d.stringMap(n, v, path)
		return
	}
	d.scalar(n, v, path)
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.ScalarNode {
		d.problems.add(path, n.Line, "expected a single value, got %s", describe(n))
		return
	}
	if msg := setScalar(v, n.Value, yamlBools); msg != "" {
		d.problems.add(path, n.Line, "%s", msg)
		return
	}
	d.lines[path] = n.Line
}

// pairs calls fn for every key of a mapping node, reporting non-scalar and
// repeated keys. It reports a node that is not a mapping and returns.
func (d *decoder) pairs(n *yaml.Node, path string, fn func(key string, k, val *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		d.problems.add(path, n.Line, "expected a mapping, got %s", describe(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.problems.add(join(path, "?"), k.Line, "keys must be plain strings, got %s", describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			d.problems.add(join(path, k.Value), k.Line, "merge keys are not supported")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.problems.add(join(path, k.Value), k.Line, "given more than once (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		fn(k.Value, k, val)
	}
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	d.pairs(n, path, func(key string, k, val *yaml.Node) {
		if c, ok := v.Addr().Interface().(*Config); ok && key == "bosh" && resolve(val).Kind == yaml.SequenceNode {
			d.directors(resolve(val), c)
			return
		}
		field, ok := fieldByKey(v, key)
		if !ok {
			d.problems.add(join(path, key), k.Line, "unknown key")
			return
		}
		d.value(val, field, join(path, key))
	})
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.problems.add(path, n.Line, "expected a list, got %s", describe(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), 0, len(n.Content))
	for i, item := range n.Content {
		itemPath := fmt.Sprintf("%s[%d]", path, i)
		if item = resolve(item); isNull(item) {
			d.problems.add(itemPath, item.Line, "expected a value, got null")
			continue
		}
		elem := reflect.New(v.Type().Elem()).Elem()
		d.value(item, elem, itemPath)
		out = reflect.Append(out, elem)
	}
	v.Set(out)
	d.lines[path] = n.Line
}

func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string) {
	out := reflect.MakeMap(v.Type())
	d.pairs(n, path, func(key string, _, val *yaml.Node) {
		val = resolve(val)
		if val.Kind != yaml.ScalarNode || isNull(val) {
			d.problems.add(join(path, key), val.Line, "expected a single value, got %s", describe(val))
			return
		}
		out.SetMapIndex(reflect.ValueOf(key), reflect.ValueOf(val.Value))
	})
	if n.Kind == yaml.MappingNode {
		v.Set(out)
		d.lines[path] = n.Line
	}
}

// directors decodes bosh given as a list of Directors, each from the
// defaults of one: the first is Config.BOSH, the others MoreDirectors.
func (d *decoder) directors(n *yaml.Node, c *Config) {
	if len(n.Content) == 0 {
		d.problems.add("bosh", n.Line, "an empty list: at least one Director is needed")
		return
	}
	if len(n.Content) > MaxDirectors {
		d.problems.add("bosh", n.Line, "at most %d Directors, got %d", MaxDirectors, len(n.Content))
		return
	}
	var all []BOSHConfig
	for i, item := range n.Content {
		path := fmt.Sprintf("bosh[%d]", i)
		b := DefaultBOSH()
		b.Name = ""
		if item = resolve(item); item.Kind != yaml.MappingNode {
			d.problems.add(path, item.Line, "expected a mapping (one Director), got %s", describe(item))
			continue
		}
		d.mapping(item, reflect.ValueOf(&b).Elem(), path)
		all = append(all, b)
	}
	if len(all) == 0 {
		return
	}
	if len(all) == 1 && all[0].Name == "" { // a list of one is a single bosh section
		all[0].Name = DefaultBOSH().Name
	}
	c.BOSH, c.MoreDirectors = all[0], all[1:]
	d.lines["bosh"] = n.Line
}
