package manifests_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"
)

// This file applies BOSH ops files the way the bosh CLI does (cppforlife/
// go-patch): replace and remove; path tokens /key, /0 (index), /- (after the
// last item, replace only), /name=value (the one list item whose name is
// value); a "?" makes its token and every later one optional: replace creates
// what is missing, remove does nothing. ~1 and ~0 stand for / and ~.

// opsOp is one operation of an ops file.
type opsOp struct {
	Type  string `yaml:"type"`
	Path  string `yaml:"path"`
	Value any    `yaml:"value"`
}

type tokenKind int

const (
	keyToken tokenKind = iota
	indexToken
	appendToken
	matchToken
)

type pathToken struct {
	kind       tokenKind
	key, value string // key: the map key or the matched field; value: the matched value
	index      int
	optional   bool
}

var unescape = strings.NewReplacer("~1", "/", "~0", "~")

// parsePath splits an ops path into its tokens.
func parsePath(path string) ([]pathToken, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("path %q does not start with /", path)
	}
	parts := strings.Split(path[1:], "/")
	var tokens []pathToken
	optional := false
	for i, part := range parts {
		part = unescape.Replace(part)
		if part == "-" && i == len(parts)-1 {
			tokens = append(tokens, pathToken{kind: appendToken})
			continue
		}
		if n, err := strconv.Atoi(part); err == nil {
			tokens = append(tokens, pathToken{kind: indexToken, index: n})
			continue
		}
		if strings.HasSuffix(part, "?") {
			optional, part = true, strings.TrimSuffix(part, "?")
		}
		if key, value, ok := strings.Cut(part, "="); ok {
			tokens = append(tokens, pathToken{kind: matchToken, key: key, value: value, optional: optional})
			continue
		}
		tokens = append(tokens, pathToken{kind: keyToken, key: part, optional: optional})
	}
	return tokens, nil
}

// applyOps applies ops to doc in order; doc is changed in place.
func applyOps(doc any, ops []opsOp) (any, error) {
	for i, op := range ops {
		tokens, err := parsePath(op.Path)
		if err != nil {
			return nil, fmt.Errorf("operation %d: %w", i, err)
		}
		switch op.Type {
		case "replace":
			doc, err = replaceAt(doc, tokens, clone(op.Value), "")
		case "remove":
			if len(tokens) == 0 {
				return nil, fmt.Errorf("operation %d: cannot remove the whole document", i)
			}
			doc, err = removeAt(doc, tokens, "")
		default:
			err = fmt.Errorf("unknown type %q", op.Type)
		}
		if err != nil {
			return nil, fmt.Errorf("operation %d (%s %s): %w", i, op.Type, op.Path, err)
		}
	}
	return doc, nil
}

func replaceAt(node any, tokens []pathToken, value any, at string) (any, error) {
	if len(tokens) == 0 {
		return value, nil
	}
	t, rest := tokens[0], tokens[1:]
	switch t.kind {
	case keyToken:
		m, ok := node.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected a map at '%s'", at)
		}
		child, found := m[t.key]
		if !found && !t.optional {
			return nil, fmt.Errorf("expected to find a map key '%s' at '%s'", t.key, at)
		}
		if !found && len(rest) > 0 {
			if child = emptyFor(rest[0]); child == nil {
				return nil, fmt.Errorf("cannot create '%s/%s' for an index", at, t.key)
			}
		}
		v, err := replaceAt(child, rest, value, at+"/"+t.key)
		m[t.key] = v
		return m, err
	case appendToken:
		s, ok := node.([]any)
		if !ok {
			return nil, fmt.Errorf("expected a list at '%s'", at)
		}
		return append(s, value), nil
	}
	s, ok := node.([]any)
	if !ok {
		return nil, fmt.Errorf("expected a list at '%s'", at)
	}
	i, err := itemIndex(s, t, at)
	if i < 0 || err != nil {
		if err != nil || len(rest) == 0 {
			return append(s, value), err
		}
		item, err := replaceAt(map[string]any{t.key: t.value}, rest, value, at+"/"+t.key+"="+t.value)
		return append(s, item), err
	}
	s[i], err = replaceAt(s[i], rest, value, fmt.Sprintf("%s/%d", at, i))
	return s, err
}

func removeAt(node any, tokens []pathToken, at string) (any, error) {
	t, rest := tokens[0], tokens[1:]
	switch t.kind {
	case keyToken:
		m, ok := node.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected a map at '%s'", at)
		}
		child, found := m[t.key]
		switch {
		case !found && t.optional:
			return m, nil
		case !found:
			return nil, fmt.Errorf("expected to find a map key '%s' at '%s'", t.key, at)
		case len(rest) == 0:
			delete(m, t.key)
			return m, nil
		}
		v, err := removeAt(child, rest, at+"/"+t.key)
		m[t.key] = v
		return m, err
	case appendToken:
		return nil, fmt.Errorf("cannot remove after the last item at '%s'", at)
	}
	s, ok := node.([]any)
	if !ok {
		return nil, fmt.Errorf("expected a list at '%s'", at)
	}
	i, err := itemIndex(s, t, at)
	if i < 0 || err != nil {
		return s, err // optional and missing: nothing to remove
	}
	if len(rest) == 0 {
		return slices.Delete(s, i, i+1), nil
	}
	s[i], err = removeAt(s[i], rest, fmt.Sprintf("%s/%d", at, i))
	return s, err
}

// itemIndex finds the list item an index or name=value token names: -1 when
// an optional match finds none, an error when a required one does not find
// exactly one.
func itemIndex(s []any, t pathToken, at string) (int, error) {
	if t.kind == indexToken {
		if t.index < 0 || t.index >= len(s) {
			return 0, fmt.Errorf("expected to find index %d at '%s' (%d items)", t.index, at, len(s))
		}
		return t.index, nil
	}
	var found []int
	for i, item := range s {
		if m, ok := item.(map[string]any); ok && m[t.key] == t.value {
			found = append(found, i)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) == 0 && t.optional:
		return -1, nil
	}
	return 0, fmt.Errorf("expected to find exactly one item %s=%s at '%s', found %d", t.key, t.value, at, len(found))
}

// emptyFor is what an optional missing key becomes, given the next token.
func emptyFor(next pathToken) any {
	switch next.kind {
	case keyToken:
		return map[string]any{}
	case appendToken, matchToken:
		return []any{}
	}
	return nil
}

// clone deep-copies a YAML value, so that no operation shares it.
func clone(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, item := range x {
			out[k] = clone(item)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = clone(item)
		}
		return out
	}
	return v
}

var _ = DescribeTable("applyOps, the ops-file applier",
	func(doc, ops, want string) {
		var d any
		Expect(yaml.Unmarshal([]byte(doc), &d)).To(Succeed())
		var o []opsOp
		Expect(yaml.Unmarshal([]byte(ops), &o)).To(Succeed())
		got, err := applyOps(d, o)
		if strings.HasPrefix(want, "error: ") {
			Expect(err).To(MatchError(ContainSubstring(strings.TrimPrefix(want, "error: "))))
			return
		}
		Expect(err).NotTo(HaveOccurred())
		var w any
		Expect(yaml.Unmarshal([]byte(want), &w)).To(Succeed())
		Expect(got).To(Equal(w))
	},
	Entry("replaces a key", "{a: {b: 1}}", "[{type: replace, path: '/a/b', value: 2}]", "{a: {b: 2}}"),
	Entry("fails on a missing key", "{a: {}}", "[{type: replace, path: '/a/b', value: 2}]", "error: map key 'b'"),
	Entry("creates a missing key with ?, and what leads to it",
		"{a: {}}", "[{type: replace, path: '/a/b?/c/d', value: 2}]", "{a: {b: {c: {d: 2}}}}"),
	Entry("selects an item by name=value", "{l: [{name: x, v: 1}, {name: y, v: 1}]}",
		"[{type: replace, path: '/l/name=y/v', value: 2}]", "{l: [{name: x, v: 1}, {name: y, v: 2}]}"),
	Entry("fails when name=value matches nothing", "{l: [{name: x}]}",
		"[{type: replace, path: '/l/name=y/v', value: 2}]", "error: exactly one item name=y"),
	Entry("appends a missing name=value? item", "{l: [{name: x}]}",
		"[{type: replace, path: '/l/name=y?/v', value: 2}]", "{l: [{name: x}, {name: y, v: 2}]}"),
	Entry("replaces a name=value? item that is there", "{l: [{name: x, v: 1}]}",
		"[{type: replace, path: '/l/name=x?', value: {name: x}}]", "{l: [{name: x}]}"),
	Entry("appends with /-", "{l: [1]}", "[{type: replace, path: '/l/-', value: 2}]", "{l: [1, 2]}"),
	Entry("creates a list for /- after a key?", "{}", "[{type: replace, path: '/l?/-', value: 2}]", "{l: [2]}"),
	Entry("replaces by index", "{l: [1, 2]}", "[{type: replace, path: '/l/1', value: 3}]", "{l: [1, 3]}"),
	Entry("unescapes ~1", "{a: {}}", "[{type: replace, path: '/a/b~1c?', value: 1}]", "{a: {b/c: 1}}"),
	Entry("removes a key", "{a: {b: 1, c: 2}}", "[{type: remove, path: '/a/b'}]", "{a: {c: 2}}"),
	Entry("removes an item", "{l: [{name: x}, {name: y}]}", "[{type: remove, path: '/l/name=x'}]", "{l: [{name: y}]}"),
	Entry("fails to remove a missing key", "{a: {}}", "[{type: remove, path: '/a/b'}]", "error: map key 'b'"),
	Entry("removes nothing for a missing key?", "{a: {}}", "[{type: remove, path: '/a/b?/c'}]", "{a: {}}"),
)
