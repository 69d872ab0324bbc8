package manifests_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// This file resolves ((variables)) as bosh int does: a variable is declared
// under variables: (the config server generates it) or given by a vars file;
// ((name.key)) reads a key of its value.

var varRef = regexp.MustCompile(`\(\(([-/.\w\p{L}]+)\)\)`)

// variable is an entry of a manifest's variables: section.
type variable struct {
	Name    string         `yaml:"name"`
	Type    string         `yaml:"type"`
	Options map[string]any `yaml:"options"`
}

// subKeys are the keys a generated variable of each type has.
var subKeys = map[string][]string{
	"password":    nil,
	"certificate": {"ca", "certificate", "private_key"},
	"ssh":         {"private_key", "public_key", "public_key_fingerprint"},
	"rsa":         {"private_key", "public_key"},
	"user":        {"username", "password"},
}

// varRefs lists every ((reference)) in the values of a YAML tree.
func varRefs(node any) []string {
	var refs []string
	switch x := node.(type) {
	case string:
		for _, m := range varRef.FindAllStringSubmatch(x, -1) {
			refs = append(refs, m[1])
		}
	case map[string]any:
		for _, v := range x {
			refs = append(refs, varRefs(v)...)
		}
	case []any:
		for _, v := range x {
			refs = append(refs, varRefs(v)...)
		}
	}
	slices.Sort(refs)
	return slices.Compact(refs)
}

// variablesOf reads a manifest's variables: section.
func variablesOf(manifest map[string]any) []variable {
	var out []variable
	items, _ := manifest["variables"].([]any)
	for _, item := range items {
		m, _ := item.(map[string]any)
		v := variable{}
		v.Name, _ = m["name"].(string)
		v.Type, _ = m["type"].(string)
		v.Options, _ = m["options"].(map[string]any)
		out = append(out, v)
	}
	return out
}

// varProblems lists what bosh int --var-errs would report for manifest with
// the values of a vars file: references to variables neither declared nor
// given, keys their values do not have, and variables declared twice or of a
// type the config server does not generate.
func varProblems(manifest, given map[string]any) []string {
	var problems []string
	declared := map[string]variable{}
	for _, v := range variablesOf(manifest) {
		if _, twice := declared[v.Name]; twice {
			problems = append(problems, "variable "+v.Name+" is declared twice")
		}
		if _, known := subKeys[v.Type]; !known {
			problems = append(problems, fmt.Sprintf("variable %s has type %q", v.Name, v.Type))
		}
		if ca, ok := v.Options["ca"].(string); ok && (declared[ca].Type != "certificate" || declared[ca].Options["is_ca"] != true) {
			problems = append(problems, fmt.Sprintf("variable %s is signed by %s, not a CA declared before it", v.Name, ca))
		}
		declared[v.Name] = v
	}
	for _, ref := range varRefs(manifest) {
		name, key, hasKey := strings.Cut(ref, ".")
		if v, ok := declared[name]; ok {
			if hasKey && !slices.Contains(subKeys[v.Type], key) {
				problems = append(problems, fmt.Sprintf("((%s)): a %s has no key %s", ref, v.Type, key))
			}
			continue
		}
		value, ok := given[name]
		switch m, isMap := value.(map[string]any); {
		case !ok:
			problems = append(problems, fmt.Sprintf("((%s)): variable %s is neither declared nor given", ref, name))
		case hasKey && (!isMap || m[key] == nil):
			problems = append(problems, fmt.Sprintf("((%s)): the given %s has no key %s", ref, name, key))
		}
	}
	return problems
}

// unusedVars lists what bosh int --var-errs-unused would report for manifest
// with the values of vars files: given variables the manifest neither
// references nor declares.
func unusedVars(manifest, given map[string]any) []string {
	used := map[string]bool{}
	for _, ref := range varRefs(manifest) {
		name, _, _ := strings.Cut(ref, ".")
		used[name] = true
	}
	for _, v := range variablesOf(manifest) {
		used[v.Name] = true
	}
	var unused []string
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if !used[name] {
			unused = append(unused, name)
		}
	}
	return unused
}

// generate gives every declared variable a value, as a config server would:
// passwords, and certificates signed by their CA.
func generate(manifest map[string]any) map[string]any {
	values := map[string]any{}
	certs := map[string]*certificate{}
	for _, v := range variablesOf(manifest) {
		switch v.Type {
		case "password":
			values[v.Name] = "generated-" + v.Name
		case "certificate":
			var sans []string
			for _, san := range asList(v.Options["alternative_names"]) {
				sans = append(sans, fmt.Sprint(san))
			}
			cn := fmt.Sprint(v.Options["common_name"])
			ca, _ := v.Options["ca"].(string)
			certs[v.Name] = newCertificate(certs[ca], cn, v.Options["is_ca"] == true, sans...)
			values[v.Name] = certs[v.Name].value()
		default:
			Fail(fmt.Sprintf("variable %s: this spec generates no %s", v.Name, v.Type))
		}
	}
	return values
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// interpolate replaces every ((reference)) in node by its value: a value
// that is a reference alone takes the value's type, one inside text is printed.
func interpolate(node any, values map[string]any) any {
	switch x := node.(type) {
	case string:
		if m := varRef.FindStringSubmatch(x); m != nil && m[0] == x {
			return resolve(m[1], values)
		}
		return varRef.ReplaceAllStringFunc(x, func(ref string) string {
			return fmt.Sprint(resolve(varRef.FindStringSubmatch(ref)[1], values))
		})
	case map[string]any:
		out := map[string]any{}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out[k] = interpolate(x[k], values)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = interpolate(v, values)
		}
		return out
	}
	return node
}

func resolve(ref string, values map[string]any) any {
	name, key, hasKey := strings.Cut(ref, ".")
	value, ok := values[name]
	Expect(ok).To(BeTrue(), "no value for ((%s))", ref)
	if !hasKey {
		return value
	}
	m, _ := value.(map[string]any)
	Expect(m).To(HaveKey(key), "no value for ((%s))", ref)
	return m[key]
}
