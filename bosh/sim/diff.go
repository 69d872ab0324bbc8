package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// diffSections are the top-level keys a deployment's diff shows first, in
// this order (manifest/changeset.rb of cloudfoundry/bosh); other keys follow
// in the order the manifests give them.
var diffSections = []string{"azs", "vm_types", "vm_extensions", "resource_pools", "compilation", "networks",
	"disk_types", "name", "stemcells", "releases", "update", "jobs", "release", "addons", "variables"}

// diffContext is the configs a diff was made against; the bosh CLI sends it
// back with the deploy (POST /deployments?context=...).
type diffContext struct {
	CloudConfigIDs   []int `json:"cloud_config_ids"`
	RuntimeConfigIDs []int `json:"runtime_config_ids"`
}

type diffAnswer struct {
	Context *diffContext `json:"context,omitempty"`
	Diff    [][]any      `json:"diff"`
	Error   string       `json:"error,omitempty"`
}

// postDiff is POST /deployments/:name/diff (text/yaml, ?redact=false): the
// posted manifest merged with the current cloud configs, against the
// deployment's manifest merged with the cloud config it was deployed with
// (nothing for a new deployment). Like the Director it always answers 200:
// a manifest it cannot read gives an empty diff and an error, no context.
// Values under properties are redacted unless redact=false.
func (d *Director) postDiff(w http.ResponseWriter, r *http.Request, _ string) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "text/yaml" {
		endpointNotFound(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxManifest))
	if err != nil {
		writeError(w, http.StatusBadRequest, codeValidationType, "Reading the manifest: %v", err)
		return
	}
	name, redact := r.PathValue("name"), r.URL.Query().Get("redact") != "false"
	after, err := manifestHash(string(body))
	if err != nil {
		writeJSON(w, http.StatusOK, diffAnswer{Diff: [][]any{}, Error: "Unable to diff manifest: " + err.Error()})
		return
	}
	setKey(after, "name", name) // the Director diffs under the route's name
	d.mu.RLock()
	ctx := d.diffContextLocked()
	var before *yaml.Node
	if dep := d.deployments[name]; dep != nil && dep.content != nil {
		before, _ = manifestHash(dep.manifestText())
		if before != nil {
			mergeCloud(before, d.configTextLocked(dep.cloudConfig))
		}
	}
	for _, id := range ctx.CloudConfigIDs {
		mergeCloud(after, d.configTextLocked(id))
	}
	d.mu.RUnlock()
	writeJSON(w, http.StatusOK, diffAnswer{Context: &ctx, Diff: manifestDiff(before, after, redact)})
}

// diffContextLocked is the ids of the current cloud and runtime configs.
func (d *Director) diffContextLocked() diffContext {
	ctx := diffContext{CloudConfigIDs: []int{}, RuntimeConfigIDs: []int{}}
	seen := map[[2]string]bool{}
	for _, c := range slices.Backward(d.configs) {
		key := [2]string{c.typ, c.name}
		if seen[key] {
			continue
		}
		seen[key] = true
		switch c.typ {
		case "cloud":
			ctx.CloudConfigIDs = append(ctx.CloudConfigIDs, c.id)
		case "runtime":
			ctx.RuntimeConfigIDs = append(ctx.RuntimeConfigIDs, c.id)
		}
	}
	slices.Sort(ctx.CloudConfigIDs)
	slices.Sort(ctx.RuntimeConfigIDs)
	return ctx
}

// checkDiffContext checks a deploy's context parameter: every config id it
// names must exist (190025 otherwise, as the Director answers).
func (d *Director) checkDiffContext(raw string) error {
	if raw == "" {
		return nil
	}
	var ctx diffContext
	if err := json.Unmarshal([]byte(raw), &ctx); err != nil {
		return &manifestError{code: codeInvalidConfigRef, msg: "Context includes invalid config ID"}
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, id := range append(ctx.CloudConfigIDs, ctx.RuntimeConfigIDs...) {
		if d.configTextLocked(id) == "" {
			return &manifestError{code: codeInvalidConfigRef, msg: "Context includes invalid config ID"}
		}
	}
	return nil
}

// codeInvalidConfigRef is DeploymentInvalidConfigReference.
const codeInvalidConfigRef = 190025

// configTextLocked is the content of config id, "" when there is none.
func (d *Director) configTextLocked(id int) string {
	for _, c := range d.configs {
		if c.id == id {
			return c.content
		}
	}
	return ""
}

// manifestHash parses a manifest as the Director's validate_manifest_yml:
// not empty, YAML, a mapping.
func manifestHash(text string) (*yaml.Node, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("Manifest should not be empty")
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		return nil, fmt.Errorf("Incorrect YAML structure of the uploaded manifest: %v", err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("Manifest should be a hash")
	}
	return doc.Content[0], nil
}

// setKey sets a scalar key of a mapping, adding it when absent.
func setKey(m *yaml.Node, key, value string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}

// mergeCloud adds a cloud config's top-level keys to a manifest, as the
// Director merges them before it diffs.
func mergeCloud(m *yaml.Node, cloud string) {
	c, err := manifestHash(cloud)
	if err != nil {
		return
	}
	for i := 0; i+1 < len(c.Content); i += 2 {
		if keyIndex(m, c.Content[i].Value) < 0 {
			m.Content = append(m.Content, c.Content[i], c.Content[i+1])
		}
	}
}

func keyIndex(m *yaml.Node, key string) int {
	if m == nil {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return i
		}
	}
	return -1
}

// manifestDiff is the Director's diff of two manifests: section by section
// (diffSections first, then the others), each rendered as YAML, its changed
// lines "added" or "removed" with the lines that hold them (null), sections
// apart by an empty line.
func manifestDiff(before, after *yaml.Node, redact bool) [][]any {
	out := [][]any{}
	for _, key := range sectionOrder(before, after) {
		// compared as they are, shown redacted: a changed secret shows as a
		// removed and an added "<redacted>", as the Director shows it
		a, b := sectionLines(before, key, false), sectionLines(after, key, false)
		aShown, bShown := a, b
		if redact {
			aShown, bShown = sectionLines(before, key, true), sectionLines(after, key, true)
			if len(aShown) != len(a) || len(bShown) != len(b) { // a redacted block scalar: compare as shown
				a, b = aShown, bShown
			}
		}
		lines := lineDiff(a, b, aShown, bShown)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, []any{"", nil})
		}
		out = append(out, lines...)
	}
	return out
}

// sectionOrder lists the top-level keys of both manifests in diff order.
func sectionOrder(before, after *yaml.Node) []string {
	var others []string
	for _, m := range []*yaml.Node{before, after} {
		if m == nil {
			continue
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			if k := m.Content[i].Value; !slices.Contains(diffSections, k) && !slices.Contains(others, k) {
				others = append(others, k)
			}
		}
	}
	return append(slices.Clone(diffSections), others...)
}

// sectionLines renders one top-level key of a manifest as YAML lines.
func sectionLines(m *yaml.Node, key string, redact bool) []string {
	i := keyIndex(m, key)
	if i < 0 {
		return nil
	}
	value := m.Content[i+1]
	if redact {
		value = redacted(value, false)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	section := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Value: key}, value}}
	if enc.Encode(section) != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
}

// redacted is a copy of n whose scalars under a properties key read
// "<redacted>", as the Director's redactor writes them.
func redacted(n *yaml.Node, under bool) *yaml.Node {
	cp := *n
	if n.Kind == yaml.ScalarNode {
		if under {
			cp.Value, cp.Tag, cp.Style = "<redacted>", "!!str", yaml.DoubleQuotedStyle
		}
		return &cp
	}
	cp.Content = make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			cp.Content[i] = c // keys stay
			continue
		}
		within := under || (n.Kind == yaml.MappingNode && n.Content[i-1].Value == "properties")
		cp.Content[i] = redacted(c, within)
	}
	return &cp
}

// lineDiff compares two renderings line by line (longest common
// subsequence): removed and added lines, each preceded by the unchanged
// lines that hold it (the nearest line of each smaller indentation),
// written once; the lines are written as aShown and bShown give them.
func lineDiff(a, b, aShown, bShown []string) [][]any {
	// lcs[i][j] is the length of the longest common subsequence of a[i:], b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out [][]any
	var held []string // unchanged lines seen so far, in order
	shown := map[int]bool{}
	hold := func(line string) {
		// the unchanged lines above line with smaller indentation, nearest first
		var chain []int
		want := indentOf(line)
		for k := len(held) - 1; k >= 0 && want > 0; k-- {
			if ind := indentOf(held[k]); ind < want {
				chain = append(chain, k)
				want = ind
			}
		}
		for _, k := range slices.Backward(chain) {
			if !shown[k] {
				shown[k] = true
				out = append(out, []any{held[k], nil})
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			held = append(held, bShown[j])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			hold(aShown[i])
			out = append(out, []any{aShown[i], "removed"})
			i++
		default:
			hold(bShown[j])
			out = append(out, []any{bShown[j], "added"})
			j++
		}
	}
	return out
}

// indentOf is a line's indentation; a "- " item counts as one more level.
func indentOf(line string) int {
	n := len(line) - len(strings.TrimLeft(line, " "))
	if strings.HasPrefix(line[n:], "- ") {
		n++
	}
	return n
}
