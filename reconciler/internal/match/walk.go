package match

import (
	"fmt"
	"slices"

	"gopkg.in/yaml.v3"
)

// A manifest is read in two linear steps: the YAML package parses the text
// into nodes (no decoding), then the reconciler takes the keys it uses from
// them, checking each mapping it reads as the YAML package would (a key
// written twice, a key that is no string, a merge of something else than
// mappings), with the same answer. Decoding into structs instead lets the
// YAML package compare every pair of keys of each mapping it reads, and
// write an error for each pair that matches: 4,000 copies of one key took
// 12 s; the 50,000 the bounds let through would take hours.

// parseNode parses text (its first document) into nodes.
func parseNode(text string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// nodeKey is what makes two mapping keys the same to the YAML package: the
// kind of node and its text.
type nodeKey struct {
	kind  yaml.Kind
	value string
}

// The fields read of each mapping (the names the YAML package would decode
// them into a struct by).
var (
	manifestFields = []string{"name", "properties", "instance_groups", "stemcells"}
	groupFields    = []string{"name", "properties"}
	stemcellFields = []string{"alias", "os", "name", "version"}
	propsFields    = []string{"blacksmith"}
	blockFields    = []string{"service_id", "plan_id", "instance_id", "organization_guid", "space_guid", "parameters"}
)

// readManifest takes a Manifest from a parsed document: an empty document is
// an empty manifest, anything but a mapping an error.
func readManifest(doc *yaml.Node) (*Manifest, error) {
	var m Manifest
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		doc = doc.Content[0]
	}
	if doc.Kind == 0 || isNull(doc) {
		return &m, nil
	}
	root, err := mappingAt(doc, "the manifest")
	if err != nil {
		return nil, err
	}
	budget := maxNodes
	w, err := newWalk(root, manifestFields, &budget)
	if err != nil {
		return nil, err
	}
	if err = w.str("name", &m.Name); err != nil {
		return nil, err
	}
	if m.Properties.Blacksmith, err = w.blacksmith(); err != nil {
		return nil, err
	}
	err = w.each("instance_groups", groupFields, func(g walk) error {
		var ig InstanceGroup
		if err := g.str("name", &ig.Name); err != nil {
			return err
		}
		var err error
		ig.Properties.Blacksmith, err = g.blacksmith()
		m.InstanceGroups = append(m.InstanceGroups, ig)
		return err
	})
	if err != nil {
		return nil, err
	}
	err = w.each("stemcells", stemcellFields, func(s walk) error {
		var st Stemcell
		for key, to := range map[string]*string{"alias": &st.Alias, "os": &st.OS, "name": &st.Name, "version": &st.Version} {
			if err := s.str(key, to); err != nil {
				return err
			}
		}
		m.Stemcells = append(m.Stemcells, st)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// walk is one mapping of a manifest, checked and read key by key.
type walk struct {
	keys   map[string]*yaml.Node // each key's value: the mapping's own, else its merged mappings'
	budget *int                  // the keys visited, merged mappings each time (shared by a manifest)
}

// newWalk checks mapping m (and the mappings merged into it) as the YAML
// package does when it decodes m into a struct of the given fields.
func newWalk(m *yaml.Node, fields []string, budget *int) (walk, error) {
	w := walk{keys: make(map[string]*yaml.Node, len(fields)), budget: budget}
	return w, w.collect(m, fields, 0)
}

// collect takes m's keys that are not taken yet (the mapping's own come
// first, then those of each mapping merged into it, "<<: *anchor" or a
// sequence of them, in order), checking every key as the YAML package does.
// fields is nil for a merged mapping (a field set twice is an error only in
// the mapping itself).
func (w walk) collect(m *yaml.Node, fields []string, depth int) error {
	if depth > maxFlowDepth {
		return fmt.Errorf("%w: merge keys nested more than %d deep", ErrManifestBounds, maxFlowDepth)
	}
	if *w.budget -= len(m.Content) / 2; *w.budget < 0 {
		return fmt.Errorf("%w: more than %d keys read (merges counted each time)", ErrManifestBounds, maxNodes)
	}
	seen := make(map[nodeKey]int, len(m.Content)/2)
	var merge *yaml.Node
	own := make(map[string]bool, len(fields))
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i]
		if line, ok := seen[nodeKey{k.Kind, k.Value}]; ok {
			return fmt.Errorf("line %d: mapping key %s already defined at line %d", k.Line, quote(k.Value), line)
		}
		seen[nodeKey{k.Kind, k.Value}] = k.Line
		if isMerge(k) {
			merge = m.Content[i+1]
			continue
		}
		name, err := keyName(k)
		if err != nil {
			return err
		}
		if _, taken := w.keys[name]; taken {
			if own[name] && slices.Contains(fields, name) {
				return fmt.Errorf("line %d: field %s already set", k.Line, name)
			}
			continue
		}
		w.keys[name], own[name] = m.Content[i+1], true
	}
	if merge == nil {
		return nil
	}
	merged := []*yaml.Node{merge}
	if merge.Kind == yaml.SequenceNode {
		merged = merge.Content
	}
	for _, from := range merged {
		if from = resolve(from); from.Kind != yaml.MappingNode {
			return fmt.Errorf("line %d: map merge requires map or sequence of maps as the value", from.Line)
		}
		if err := w.collect(from, nil, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// get is key's value, nil when the mapping has none.
func (w walk) get(key string) *yaml.Node { return w.keys[key] }

// keyName is a key of a mapping read into a struct, as the YAML package
// decodes it into a string: a scalar (or an alias of one); anything else is
// an error, as it is there.
func keyName(k *yaml.Node) (string, error) {
	k = resolve(k)
	switch {
	case k.Kind != yaml.ScalarNode:
		return "", fmt.Errorf("line %d: a key that is %s, not a string", k.Line, kindName(k))
	case k.Tag == "" || k.ShortTag() == "!!str":
		return k.Value, nil
	}
	var s string
	if err := k.Decode(&s); err != nil {
		return "", err
	}
	return s, nil
}

// isMerge is the YAML package's test for a merge key.
func isMerge(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (k.Tag == "" || k.Tag == "!" || k.Tag == "!!merge" || k.Tag == "tag:yaml.org,2002:merge")
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i <= maxFlowDepth; i++ {
		n = n.Alias
	}
	return n
}

// isNull says whether n is YAML's null, which leaves a field as it is.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// mappingAt is n resolved, when a mapping; what names the place in the error.
func mappingAt(n *yaml.Node, what string) (*yaml.Node, error) {
	if n = resolve(n); n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: %s is %s, not a mapping", n.Line, what, kindName(n))
	}
	return n, nil
}

// str sets *to to key's scalar value, as the YAML package decodes a scalar
// into a string; a missing or null key leaves it alone.
func (w walk) str(key string, to *string) error {
	v := w.get(key)
	if v == nil {
		return nil
	}
	if v = resolve(v); isNull(v) {
		return nil
	}
	if v.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %s is %s, not a string", v.Line, key, kindName(v))
	}
	return v.Decode(to)
}

// each calls f with every mapping of key's sequence (null entries are
// skipped), read as a struct of the given fields; a missing or null key
// calls it for none.
func (w walk) each(key string, fields []string, f func(walk) error) error {
	v := w.get(key)
	if v == nil {
		return nil
	}
	if v = resolve(v); isNull(v) {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		return fmt.Errorf("line %d: %s is %s, not a sequence", v.Line, key, kindName(v))
	}
	for _, item := range v.Content {
		if item = resolve(item); isNull(item) {
			continue // the YAML package drops a null entry of a sequence of structs
		}
		m, err := mappingAt(item, "an entry of "+key)
		if err != nil {
			return err
		}
		entry, err := newWalk(m, fields, w.budget)
		if err != nil {
			return err
		}
		if err := f(entry); err != nil {
			return err
		}
	}
	return nil
}

// blacksmith is the mapping's properties.blacksmith block, nil when there
// is none.
func (w walk) blacksmith() (*Props, error) {
	props := w.get("properties")
	if props == nil {
		return nil, nil
	}
	if props = resolve(props); isNull(props) {
		return nil, nil
	}
	props, err := mappingAt(props, "properties")
	if err != nil {
		return nil, err
	}
	pw, err := newWalk(props, propsFields, w.budget)
	if err != nil {
		return nil, err
	}
	block := pw.get("blacksmith")
	if block == nil {
		return nil, nil
	}
	if block = resolve(block); isNull(block) {
		return nil, nil
	}
	if block, err = mappingAt(block, "properties.blacksmith"); err != nil {
		return nil, err
	}
	bw, err := newWalk(block, blockFields, w.budget)
	if err != nil {
		return nil, fmt.Errorf("properties.blacksmith: %w", err)
	}
	return propsOf(bw)
}

// propsOf reads a properties.blacksmith block; its parameters are built by
// value (linear in their size, aliases counted).
func propsOf(b walk) (*Props, error) {
	var p Props
	for key, to := range map[string]*string{"service_id": &p.ServiceID, "plan_id": &p.PlanID, "instance_id": &p.InstanceID,
		"organization_guid": &p.OrganizationGUID, "space_guid": &p.SpaceGUID} {
		if err := b.str(key, to); err != nil {
			return nil, fmt.Errorf("properties.blacksmith: %w", err)
		}
	}
	params := b.get("parameters")
	if params == nil {
		return &p, nil
	}
	var err error
	if p.Parameters, err = value(params, b.budget, 0); err != nil {
		return nil, fmt.Errorf("properties.blacksmith.parameters: %w", err)
	}
	return &p, nil
}

// kindName names a node's kind for an error.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		return "a scalar"
	}
	return "empty"
}
