package operation

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// KeepVariables keeps in rendered what running has that the broker did
// not put there and the rendering would drop: every configuration-server
// variable (where running has a scalar holding a ((name)) and rendered has
// another scalar at the same place: mappings by key, named list items by
// name, other lists by position, rendered takes running's) and every
// errand instance group that rendered lacks and whose jobs' releases
// rendered has (an operator's smoke tests); the definitions of the
// variables they use (running's variables entries) are carried over when
// rendered has none.
// It answers the manifest to deploy (rendered itself when nothing was
// kept) and the places kept ("instance_groups/redis/jobs/redis/properties/password").
// The broker did not put those variables there: an operator or an older
// broker did, and the Director's configuration server holds their values.
func KeepVariables(running, rendered string) (string, []string, error) {
	r, err := parse(running, "the running manifest")
	if err != nil {
		return "", nil, err
	}
	var doc yaml.Node
	if len(rendered) > maxManifest {
		return "", nil, fmt.Errorf("the rendered manifest is %d bytes, over %d", len(rendered), maxManifest)
	}
	if err := yaml.Unmarshal([]byte(rendered), &doc); err != nil {
		return "", nil, fmt.Errorf("the rendered manifest is not YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return "", nil, errors.New("the rendered manifest is not a YAML mapping")
	}
	k := keeper{refs: map[string]bool{}}
	if err := k.keep(r, doc.Content[0], nil, 0); err != nil {
		return "", nil, err
	}
	k.keepErrands(r, doc.Content[0])
	if len(k.kept) == 0 {
		return rendered, nil, nil
	}
	k.carryDefinitions(r, doc.Content[0])
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return "", nil, fmt.Errorf("writing the manifest with its variables kept: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", nil, fmt.Errorf("writing the manifest with its variables kept: %w", err)
	}
	return b.String(), k.kept, nil
}

type keeper struct {
	kept []string
	refs map[string]bool // the variables' names kept
}

func (k *keeper) keep(running, rendered *yaml.Node, path []string, depth int) error {
	if depth > maxDepth {
		return errTooDeep
	}
	running = deref(running)
	if running == nil || rendered == nil || rendered.Kind == yaml.AliasNode {
		return nil
	}
	switch {
	case running.Kind == yaml.MappingNode && rendered.Kind == yaml.MappingNode:
		rm := pairsOf(running)
		for i := 0; i+1 < len(rendered.Content); i += 2 {
			key := rendered.Content[i].Value
			if key == "variables" && len(path) == 0 {
				continue
			}
			if err := k.keep(rm[key], rendered.Content[i+1], append(path[:len(path):len(path)], key), depth+1); err != nil {
				return err
			}
		}
	case running.Kind == yaml.SequenceNode && rendered.Kind == yaml.SequenceNode:
		if named(running) && named(rendered) {
			rn := byName(running)
			for _, item := range rendered.Content {
				name := nameOf(item)
				if err := k.keep(rn[name], item, append(path[:len(path):len(path)], name), depth+1); err != nil {
					return err
				}
			}
			return nil
		}
		for i, item := range rendered.Content {
			if i < len(running.Content) {
				if err := k.keep(running.Content[i], item, path, depth+1); err != nil {
					return err
				}
			}
		}
	case running.Kind == yaml.ScalarNode && rendered.Kind == yaml.ScalarNode:
		refs := variableRef.FindAllString(running.Value, -1)
		if len(refs) == 0 || running.Value == rendered.Value {
			return nil
		}
		rendered.Value, rendered.Tag, rendered.Style = running.Value, "!!str", 0
		k.kept = append(k.kept, strings.Join(path, "/"))
		for _, ref := range refs {
			k.refs[variableName(ref)] = true
		}
	}
	return nil
}

// variableName is the name of ((name)), its leading "/" and any ".field" dropped.
func variableName(ref string) string {
	name := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(ref, "(("), "))"))
	name = strings.TrimPrefix(name, "!")
	name, _, _ = strings.Cut(name, ".")
	return name
}

// keepErrands appends to rendered's instance groups the errands of running
// that rendered has no group of that name for, when every release their
// jobs name is among rendered's releases (else the guard names the
// errand's removal).
func (k *keeper) keepErrands(running, rendered *yaml.Node) {
	rg, have := deref(pairsOf(running)["instance_groups"]), deref(pairsOf(rendered)["instance_groups"])
	if rg == nil || have == nil || rg.Kind != yaml.SequenceNode || have.Kind != yaml.SequenceNode || !named(have) {
		return
	}
	releases := map[string]bool{}
	if rel := deref(pairsOf(rendered)["releases"]); rel != nil && rel.Kind == yaml.SequenceNode {
		for _, r := range rel.Content {
			releases[nameOf(r)] = true
		}
	}
	names := byName(have)
	for _, g := range rg.Content {
		g = deref(g)
		name := nameOf(g)
		if name == "" || names[name] != nil || g.Kind != yaml.MappingNode || !isErrand(g) || !releasesOf(g, releases) {
			continue
		}
		have.Content = append(have.Content, g)
		names[name] = g
		k.kept = append(k.kept, "instance_groups/"+name)
		for _, ref := range variableRef.FindAllString(text(g), -1) {
			k.refs[variableName(ref)] = true
		}
	}
}

// isErrand says whether an instance group has lifecycle errand.
func isErrand(g *yaml.Node) bool {
	l := deref(pairsOf(g)["lifecycle"])
	return l != nil && l.Kind == yaml.ScalarNode && l.Value == "errand"
}

// releasesOf says whether every job of group g names a release in releases.
func releasesOf(g *yaml.Node, releases map[string]bool) bool {
	jobs := deref(pairsOf(g)["jobs"])
	if jobs == nil || jobs.Kind != yaml.SequenceNode {
		return false
	}
	for _, j := range jobs.Content {
		r := deref(pairsOf(deref(j))["release"])
		if deref(j).Kind != yaml.MappingNode || r == nil || !releases[r.Value] {
			return false
		}
	}
	return true
}

// text is a node written as YAML ("" when it cannot be).
func text(n *yaml.Node) string {
	out, err := yaml.Marshal(n)
	if err != nil {
		return ""
	}
	return string(out)
}

// carryDefinitions copies running's definitions of the kept variables that
// rendered does not define.
func (k *keeper) carryDefinitions(running, rendered *yaml.Node) {
	rv := deref(pairsOf(running)["variables"])
	if rv == nil || rv.Kind != yaml.SequenceNode {
		return
	}
	var have *yaml.Node
	for i := 0; i+1 < len(rendered.Content); i += 2 {
		if rendered.Content[i].Value == "variables" {
			have = rendered.Content[i+1]
		}
	}
	if have != nil && have.Kind != yaml.SequenceNode {
		return
	}
	defined := map[string]bool{}
	if have != nil {
		for _, c := range have.Content {
			defined[nameOf(c)] = true
		}
	}
	for _, c := range rv.Content {
		name := nameOf(c)
		if name == "" || !k.refs[name] || defined[name] {
			continue
		}
		if have == nil {
			have = &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
			rendered.Content = append(rendered.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "variables"}, have)
		}
		have.Content = append(have.Content, c)
		defined[name] = true
	}
}
