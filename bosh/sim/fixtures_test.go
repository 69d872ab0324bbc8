package sim_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// fixturesDir is bosh/testdata/director-api, the Director's answers kept
// in the repository (see its README); it must never be outside the module.
func fixturesDir() string {
	dir, err := filepath.Abs(filepath.Join("..", "testdata", "director-api"))
	Expect(err).NotTo(HaveOccurred())
	return dir
}

func fixtureBytes(name string) []byte {
	b, err := os.ReadFile(filepath.Join(fixturesDir(), name))
	ExpectWithOffset(1, err).NotTo(HaveOccurred())
	return b
}

// fixture decodes a JSON fixture.
func fixture(name string) any {
	var v any
	ExpectWithOffset(1, json.Unmarshal(fixtureBytes(name), &v)).To(Succeed(), name)
	return v
}

// shapeDiff lists where actual differs from expected in field names or
// JSON types: objects must have the same keys, nulls must be null, arrays
// hold elements shaped like the expected array's first element.
func shapeDiff(actual, expected any, path string) []string {
	switch e := expected.(type) {
	case map[string]any:
		a, ok := actual.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %T", path, actual)}
		}
		return objectDiff(a, e, path)
	case []any:
		a, ok := actual.([]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an array, got %T", path, actual)}
		}
		var out []string
		for i := range a {
			if len(e) > 0 {
				out = append(out, shapeDiff(a[i], e[0], fmt.Sprintf("%s[%d]", path, i))...)
			}
		}
		return out
	case nil:
		if actual != nil {
			return []string{fmt.Sprintf("%s: want null, got %v", path, actual)}
		}
		return nil
	}
	if reflect.TypeOf(actual) != reflect.TypeOf(expected) {
		return []string{fmt.Sprintf("%s: want a %T, got %T (%v)", path, expected, actual, actual)}
	}
	return nil
}

func objectDiff(a, e map[string]any, path string) []string {
	var out []string
	for _, k := range sortedKeys(e) {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s.%s: missing", path, k))
			continue
		}
		out = append(out, shapeDiff(a[k], e[k], path+"."+k)...)
	}
	for _, k := range sortedKeys(a) {
		if _, ok := e[k]; !ok {
			out = append(out, fmt.Sprintf("%s.%s: not in the fixture", path, k))
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// expectShape asserts that actual has the fixture's fields and types.
func expectShape(actual, expected any) {
	ExpectWithOffset(1, shapeDiff(actual, expected, "$")).To(BeEmpty())
}

// without returns a copy of an object without some keys.
func without(v any, keys ...string) map[string]any {
	out := map[string]any{}
	for k, val := range v.(map[string]any) {
		if !slices.Contains(keys, k) {
			out[k] = val
		}
	}
	return out
}

var _ = Describe("the Director API fixtures", func() {
	It("live in the repository, next to the go.mod of the module", func() {
		root, err := filepath.Abs(filepath.Join("..", ".."))
		Expect(err).NotTo(HaveOccurred())
		Expect(filepath.Join(root, "go.mod")).To(BeAnExistingFile())
		rel, err := filepath.Rel(root, fixturesDir())
		Expect(err).NotTo(HaveOccurred())
		Expect(rel).NotTo(HavePrefix(".."))
		entries, err := os.ReadDir(fixturesDir())
		Expect(err).NotTo(HaveOccurred())
		Expect(len(entries)).To(BeNumerically(">=", 20))
	})
})

var _ = Describe("shapeDiff, the fixture comparison itself", func() {
	It("finds missing and extra fields, wrong types and non-null values", func() {
		expected := map[string]any{"a": "x", "b": 1.0, "c": nil, "d": []any{map[string]any{"e": true}}}
		Expect(shapeDiff(map[string]any{"a": "y", "b": 2.0, "c": nil, "d": []any{map[string]any{"e": false}}}, expected, "$")).To(BeEmpty())
		Expect(shapeDiff(map[string]any{"a": 1.0, "c": "z", "d": []any{map[string]any{"f": true}}, "g": 1.0}, expected, "$")).To(ConsistOf(
			"$.a: want a string, got float64 (1)", "$.b: missing", "$.c: want null, got z",
			"$.d[0].e: missing", "$.d[0].f: not in the fixture", "$.g: not in the fixture"))
	})
})
