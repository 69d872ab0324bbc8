package match

import (
	"fmt"
	"reflect"
)

// SameValues says whether two manifests hold the same values, whatever their
// layout, key order and comments, each parsed within the bounds (one is a
// Director's answer). Equal texts are equal without parsing.
func SameValues(a, b string) (bool, error) {
	if a == b {
		return true, nil
	}
	va, err := tree(a)
	if err != nil {
		return false, err
	}
	vb, err := tree(b)
	if err != nil {
		return false, err
	}
	return reflect.DeepEqual(va, vb), nil
}

// tree is a manifest's values, within the bounds.
func tree(text string) (any, error) {
	if err := checkBounds(text); err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	doc, err := parseNode(text)
	if err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	budget := maxNodes
	v, err := value(doc, &budget, 0)
	if err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	return v, nil
}
