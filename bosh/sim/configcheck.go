package sim

import (
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// runtimeDump is the text the Director stores for a runtime config: its
// ensure_release_version_is_string writes releases[].version as strings
// (Ruby's to_s: 1.10 is "1.1") and YAML.dump re-dumps the whole, starting
// with "---". The simulator re-dumps with yaml.v3: the same data, not
// Psych's exact layout (sequences indented, double quotes).
func runtimeDump(root *yaml.Node) string {
	m := plainNode(root, false)
	if rels := configValue(m, "releases"); rels != nil && rels.Kind == yaml.SequenceNode {
		for _, rel := range rels.Content {
			if v := configValue(rel, "version"); v != nil && v.Kind == yaml.ScalarNode {
				stringifyVersion(v)
			}
		}
	}
	return "---\n" + encodeYAML(m)
}

func stringifyVersion(v *yaml.Node) {
	var x any
	if v.Decode(&x) != nil || x == nil || x == false {
		return // Ruby's `if rel['version']`
	}
	switch n := x.(type) {
	case int:
		v.Value = strconv.Itoa(n)
	case float64:
		if v.Value = strconv.FormatFloat(n, 'f', -1, 64); !strings.Contains(v.Value, ".") {
			v.Value += ".0"
		}
	}
	v.Tag = "!!str"
}

// checkCPIs checks a cpi config as the Director's CpiManifestParser: cpis
// a list of mappings with a string name and type and an optional
// migrated_from list of names; no name twice among all of them.
func checkCPIs(root *yaml.Node) error {
	cpis, err := safeProperty(root, "cpis", "Array", false)
	if err != nil {
		return err
	}
	var names []string
	for _, cpi := range cpis.Content {
		n, err := cpiNames(cpi)
		if err != nil {
			return err
		}
		names = append(names, n...)
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			return &manifestError{code: codeDuplicateCPI, msg: "Duplicate cpi name '" + n + "'"}
		}
		seen[n] = true
	}
	return nil
}

// cpiNames checks a cpi as the Director's Cpi.parse does and returns the
// names it takes: those it migrated from, then its own.
func cpiNames(cpi *yaml.Node) ([]string, error) {
	name, err := safeProperty(cpi, "name", "String", false)
	if err != nil {
		return nil, err
	}
	if _, err := safeProperty(cpi, "type", "String", false); err != nil {
		return nil, err
	}
	migrated, err := safeProperty(cpi, "migrated_from", "Array", true)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := 0; migrated != nil && i < len(migrated.Content); i++ {
		from, err := safeProperty(migrated.Content[i], "name", "String", false)
		if err != nil {
			return nil, err
		}
		names = append(names, from.Value)
	}
	return append(names, name.Value), nil
}

// safeProperty is the Director's ValidationHelper#safe_property: obj must
// be a mapping (or null), key present unless optional (nil then), its value
// of class Array, Hash or String (a number counts as a String).
func safeProperty(obj *yaml.Node, key, class string, optional bool) (*yaml.Node, error) {
	obj = deref(obj)
	if obj != nil && obj.Tag == "!!null" {
		obj = nil
	}
	if obj != nil && obj.Kind != yaml.MappingNode {
		return nil, &manifestError{code: codeValidationType,
			msg: "Object (" + rubyInspect(obj) + ") did not match the required type 'Hash'"}
	}
	v := deref(configValue(obj, key))
	switch {
	case v == nil && optional:
		return nil, nil
	case v == nil:
		return nil, missing(key, rubyInspect(obj))
	case class == "Array" && v.Kind == yaml.SequenceNode, class == "Hash" && v.Kind == yaml.MappingNode,
		class == "String" && v.Kind == yaml.ScalarNode && slices.Contains([]string{"!!str", "!!int", "!!float"}, v.Tag):
		return v, nil
	}
	return nil, &manifestError{code: codeValidationType,
		msg: "Property '" + key + "' value (" + rubyInspect(v) + ") did not match the required type '" + class + "'"}
}

// maxInspect cuts the objects quoted in messages: the Director quotes them
// whole, which for a large config would be stored again in every event.
const maxInspect = 1000

// rubyInspect writes a parsed YAML value as Ruby 3.4's inspect does:
// {"name" => "c1", "n" => 1}, [nil, true].
func rubyInspect(n *yaml.Node) string {
	var b strings.Builder
	inspectTo(&b, n)
	if b.Len() > maxInspect {
		return strings.ToValidUTF8(b.String()[:maxInspect], "") + "..."
	}
	return b.String()
}

func inspectTo(b *strings.Builder, n *yaml.Node) {
	n = deref(n)
	switch {
	case b.Len() > maxInspect:
	case n == nil || n.Tag == "!!null":
		b.WriteString("nil")
	case n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode:
		open, end := "[", "]"
		if n.Kind == yaml.MappingNode {
			open, end = "{", "}"
		}
		b.WriteString(open)
		for i, c := range n.Content {
			switch {
			case n.Kind == yaml.MappingNode && i%2 == 1:
				b.WriteString(" => ")
			case i > 0:
				b.WriteString(", ")
			}
			inspectTo(b, c)
		}
		b.WriteString(end)
	case n.Tag == "!!bool":
		b.WriteString(strings.ToLower(n.Value))
	case n.Tag == "!!int" || n.Tag == "!!float":
		b.WriteString(n.Value)
	default:
		b.WriteString(strconv.Quote(n.Value))
	}
}

// deref follows aliases and documents to the value they stand for.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.AliasNode || n.Kind == yaml.DocumentNode) {
		if n.Kind == yaml.AliasNode {
			n = n.Alias
		} else if len(n.Content) > 0 {
			n = n.Content[0]
		} else {
			return nil
		}
	}
	return n
}

// configValue is the value of key in mapping m, nil when m has none.
func configValue(m *yaml.Node, key string) *yaml.Node {
	if m = deref(m); m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if deref(m.Content[i]).Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}
