package operation

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// maxManifest bounds a manifest read here (the Director's own bound is
// about this).
const maxManifest = 16 << 20

// maxDepth bounds how deep a manifest is walked.
const maxDepth = 64

// parse reads a manifest into its document's root mapping.
func parse(text, what string) (*yaml.Node, error) {
	if len(text) > maxManifest {
		return nil, fmt.Errorf("%s is %d bytes, over %d", what, len(text), maxManifest)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("%s is not YAML: %w", what, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s is not a YAML mapping", what)
	}
	return doc.Content[0], nil
}

// Compare is the changes deploying after over before would make, found by
// walking both (mappings by key, lists of named items by name, other
// lists as sets of their scalars): what Classify finds in the Director's
// diff of the same two manifests. Guard uses it for the changes an
// operation means: those between the manifest rendered from what the
// instance had and the one rendered from what it asks.
func Compare(before, after string) ([]Change, error) {
	b, err := parse(before, "the manifest before")
	if err != nil {
		return nil, err
	}
	a, err := parse(after, "the manifest after")
	if err != nil {
		return nil, err
	}
	w := &walker{budget: maxVisits}
	if err := walkPair(b, a, nil, "", w, 0); err != nil {
		return nil, err
	}
	return classify(w.entries), nil
}

var (
	errTooDeep  = errors.New("the manifest nests deeper than 64 levels")
	errTooLarge = fmt.Errorf("the manifests hold more than %d values to compare (aliases expanded)", maxVisits)
)

// maxVisits bounds the values a comparison visits: aliases are followed,
// and a manifest of aliases of aliases (hostile: what a shared Director
// runs) would otherwise be walked for ever.
const maxVisits = 1_000_000

// walker collects a comparison's entries within its budget of visits.
type walker struct {
	entries []entry
	budget  int
}

// visit spends one visit of the budget.
func (w *walker) visit() error {
	if w.budget--; w.budget < 0 {
		return errTooLarge
	}
	return nil
}

// walkPair appends the entries that change before into after, at path
// under key (both may be nil: absent).
func walkPair(before, after *yaml.Node, path []string, key string, w *walker, depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	if err := w.visit(); err != nil {
		return err
	}
	before, after = deref(before), deref(after)
	switch {
	case before == nil && after == nil:
		return nil
	case before != nil && after != nil && before.Kind == yaml.MappingNode && after.Kind == yaml.MappingNode:
		return walkMaps(before, after, withKey(path, key), w, depth)
	case before != nil && after != nil && before.Kind == yaml.SequenceNode && after.Kind == yaml.SequenceNode:
		return walkLists(before, after, withKey(path, key), w, depth)
	case before != nil && after != nil && before.Kind == yaml.ScalarNode && after.Kind == yaml.ScalarNode:
		if before.Value != after.Value {
			w.entries = append(w.entries, entry{path: path, key: key, value: before.Value, removed: true},
				entry{path: path, key: key, value: after.Value})
		}
		return nil
	}
	if err := leaves(before, path, key, true, w, depth); err != nil {
		return err
	}
	return leaves(after, path, key, false, w, depth)
}

func withKey(path []string, key string) []string {
	if key == "" {
		return path
	}
	return append(path[:len(path):len(path)], key)
}

func walkMaps(before, after *yaml.Node, path []string, w *walker, depth int) error {
	bm, am := pairsOf(before), pairsOf(after)
	for i := 0; i+1 < len(before.Content); i += 2 {
		k := before.Content[i].Value
		if err := walkPair(before.Content[i+1], am[k], path, k, w, depth+1); err != nil {
			return err
		}
	}
	for i := 0; i+1 < len(after.Content); i += 2 {
		k := after.Content[i].Value
		if _, ok := bm[k]; !ok {
			if err := walkPair(nil, after.Content[i+1], path, k, w, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func walkLists(before, after *yaml.Node, path []string, w *walker, depth int) error {
	if named(before) && named(after) {
		bn, an := byName(before), byName(after)
		for _, item := range before.Content {
			name := nameOf(item)
			if other, ok := an[name]; ok {
				if err := walkPair(item, other, append(path[:len(path):len(path)], name), "", w, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := itemLeaves(item, path, name, true, w, depth); err != nil {
				return err
			}
		}
		for _, item := range after.Content {
			if name := nameOf(item); bn[name] == nil {
				if err := itemLeaves(item, path, name, false, w, depth); err != nil {
					return err
				}
			}
		}
		return nil
	}
	bs, as := scalarSet(before), scalarSet(after)
	if bs == nil || as == nil { // items by position
		for i, item := range before.Content {
			var other *yaml.Node
			if i < len(after.Content) {
				other = after.Content[i]
			}
			if err := walkPair(item, other, path, "", w, depth+1); err != nil {
				return err
			}
		}
		for _, item := range after.Content[min(len(before.Content), len(after.Content)):] {
			if err := walkPair(nil, item, path, "", w, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	{
		for _, c := range before.Content {
			if !as[deref(c).Value] {
				w.entries = append(w.entries, entry{path: path, value: deref(c).Value, removed: true})
			}
		}
		for _, c := range after.Content {
			if !bs[deref(c).Value] {
				w.entries = append(w.entries, entry{path: path, value: deref(c).Value})
			}
		}
	}
	return nil
}

// itemLeaves appends a named item removed or added: its name line, then its leaves.
func itemLeaves(item *yaml.Node, path []string, name string, removed bool, w *walker, depth int) error {
	p := append(path[:len(path):len(path)], name)
	w.entries = append(w.entries, entry{path: p, key: "name", value: name, removed: removed, item: true})
	item = deref(item)
	for i := 0; i+1 < len(item.Content); i += 2 {
		if item.Content[i].Value == "name" {
			continue
		}
		if err := leaves(item.Content[i+1], p, item.Content[i].Value, removed, w, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// leaves appends every scalar of n (nil: none) as removed or added.
func leaves(n *yaml.Node, path []string, key string, removed bool, w *walker, depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	if err := w.visit(); err != nil {
		return err
	}
	n = deref(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.ScalarNode:
		w.entries = append(w.entries, entry{path: path, key: key, value: n.Value, removed: removed})
	case yaml.MappingNode:
		p := withKey(path, key)
		for i := 0; i+1 < len(n.Content); i += 2 {
			if err := leaves(n.Content[i+1], p, n.Content[i].Value, removed, w, depth+1); err != nil {
				return err
			}
		}
	case yaml.SequenceNode:
		p := withKey(path, key)
		for _, c := range n.Content {
			if name := nameOf(c); name != "" {
				if err := itemLeaves(c, p, name, removed, w, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := leaves(c, p, "", removed, w, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// deref follows an alias; nil stays nil.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

func pairsOf(m *yaml.Node) map[string]*yaml.Node {
	out := make(map[string]*yaml.Node, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		out[m.Content[i].Value] = m.Content[i+1]
	}
	return out
}

// nameOf is a list item's name: its "name" key's scalar, "" when none.
func nameOf(item *yaml.Node) string {
	item = deref(item)
	if item == nil || item.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(item.Content); i += 2 {
		if item.Content[i].Value == "name" && deref(item.Content[i+1]) != nil && deref(item.Content[i+1]).Kind == yaml.ScalarNode {
			return deref(item.Content[i+1]).Value
		}
	}
	return ""
}

// named says whether every item of a (non-empty or empty) list has a unique name.
func named(list *yaml.Node) bool {
	seen := map[string]bool{}
	for _, c := range list.Content {
		n := nameOf(c)
		if n == "" || seen[n] {
			return false
		}
		seen[n] = true
	}
	return true
}

func byName(list *yaml.Node) map[string]*yaml.Node {
	out := make(map[string]*yaml.Node, len(list.Content))
	for _, c := range list.Content {
		out[nameOf(c)] = c
	}
	return out
}

// scalarSet is a list of scalars as a set; nil when an item is not a scalar.
func scalarSet(list *yaml.Node) map[string]bool {
	out := make(map[string]bool, len(list.Content))
	for _, c := range list.Content {
		c = deref(c)
		if c == nil || c.Kind != yaml.ScalarNode {
			return nil
		}
		out[c.Value] = true
	}
	return out
}
