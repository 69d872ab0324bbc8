package match

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// Bounds of what the reconciler parses of a manifest a Director answers
// (Director content is hostile): a manifest past them is refused before any
// YAML is parsed, so that whatever its shape (many keys, long keys, deep,
// wide) it costs well under a second and a few tens of MB.
const (
	// MaxManifestBytes bounds a manifest parsed (a service instance's is a
	// few KB; the Director answers up to 16 MiB).
	MaxManifestBytes = 8 << 20
	// maxNodes bounds the YAML values of a manifest, counted from the text
	// (every value but the first follows a ':', ',', '-' or a line break)
	// and, for properties.blacksmith.parameters, as they are built (aliases
	// expanded).
	maxNodes = 100_000
	// maxFlowDepth bounds the nesting of [ and { (YAML's parser recurses).
	maxFlowDepth = 200
	// maxIndent bounds the indentation of a line (block nesting).
	maxIndent = 2000
)

// ErrManifestBounds is the error of a manifest past the bounds.
var ErrManifestBounds = errors.New("manifest past the reconciler's bounds")

// checkBounds refuses a manifest past the bounds, from its text alone.
func checkBounds(text string) error {
	if len(text) > MaxManifestBytes {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrManifestBounds, len(text), MaxManifestBytes)
	}
	nodes, depth, indent, lineStart := 0, 0, 0, true
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\n':
			nodes++
			lineStart, indent = true, 0
			continue
		case lineStart && c == ' ':
			if indent++; indent > maxIndent {
				return fmt.Errorf("%w: a line indented more than %d columns", ErrManifestBounds, maxIndent)
			}
			continue
		case c == ':' || c == ',' || c == '-':
			nodes++
		case c == '[' || c == '{':
			if depth++; depth > maxFlowDepth {
				return fmt.Errorf("%w: [ and { nested more than %d deep", ErrManifestBounds, maxFlowDepth)
			}
		case c == ']' || c == '}':
			depth = max(depth-1, 0)
		}
		lineStart = false
		if nodes > maxNodes {
			return fmt.Errorf("%w: more than %d values", ErrManifestBounds, maxNodes)
		}
	}
	return nil
}

// value is n as the YAML package would decode it into an any: a mapping
// whose keys are all strings a map[string]any, else a map[any]any; a
// sequence a []any; a scalar its resolved value. budget bounds the values
// built (aliases expanded each time), depth the nesting.
func value(n *yaml.Node, budget *int, depth int) (any, error) {
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("%w: more than %d values", ErrManifestBounds, maxNodes)
	}
	if depth > maxFlowDepth {
		return nil, fmt.Errorf("%w: nested more than %d deep", ErrManifestBounds, maxFlowDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return value(n.Content[0], budget, depth+1)
	case yaml.AliasNode:
		return value(n.Alias, budget, depth+1)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := value(c, budget, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return mapping(n, budget, depth)
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// mapping is a mapping node's value (see value): a key written twice is an
// error, as the YAML package says it; two keys written differently that
// decode to one value (an alias and its text) keep the last, as there.
// Merge keys are taken as plain keys (the YAML package merges them).
func mapping(n *yaml.Node, budget *int, depth int) (any, error) {
	keys := make([]any, 0, len(n.Content)/2)
	vals := make([]any, 0, len(n.Content)/2)
	strs := true
	written := make(map[nodeKey]int, len(n.Content)/2)
	at := make(map[any]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := n.Content[i]
		if line, ok := written[nodeKey{kn.Kind, kn.Value}]; ok {
			return nil, fmt.Errorf("line %d: mapping key %s already defined at line %d", kn.Line, quote(kn.Value), line)
		}
		written[nodeKey{kn.Kind, kn.Value}] = kn.Line
		k, err := value(kn, budget, depth+1)
		if err != nil {
			return nil, err
		}
		if !isHashable(k) {
			return nil, fmt.Errorf("line %d: a mapping key that is not a scalar", kn.Line)
		}
		if _, ok := k.(string); !ok {
			strs = false
		}
		v, err := value(n.Content[i+1], budget, depth+1)
		if err != nil {
			return nil, err
		}
		if j, ok := at[k]; ok {
			vals[j] = v
			continue
		}
		at[k] = len(keys)
		keys, vals = append(keys, k), append(vals, v)
	}
	if strs {
		out := make(map[string]any, len(keys))
		for i, k := range keys {
			out[k.(string)] = vals[i]
		}
		return out, nil
	}
	out := make(map[any]any, len(keys))
	for i, k := range keys {
		out[k] = vals[i]
	}
	return out, nil
}

// isHashable says whether v can be a map key.
func isHashable(v any) bool {
	switch v.(type) {
	case []any, map[string]any, map[any]any:
		return false
	}
	return true
}
