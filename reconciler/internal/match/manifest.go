package match

import (
	"fmt"
	"strings"
)

// Props is a properties.blacksmith block: the keys that tie a
// deployment to a service instance (matcher strategy 2), and the broker
// fields it renders there, which restore an index entry that was lost.
type Props struct {
	ServiceID        string // service_id
	PlanID           string // plan_id
	InstanceID       string // instance_id
	OrganizationGUID string // organization_guid
	SpaceGUID        string // space_guid
	Parameters       any    // parameters, as the YAML package decodes an any
}

// propsHolder is anything with a properties.blacksmith block.
type propsHolder struct {
	Properties struct {
		Blacksmith *Props
	}
}

// Stemcell is one entry of a manifest's stemcells.
type Stemcell struct {
	Alias   string `yaml:"alias"`
	OS      string `yaml:"os"`
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
}

// Manifest is what the reconciler reads from a deployment manifest (walk.go
// reads it).
type Manifest struct {
	Name string
	propsHolder
	InstanceGroups []InstanceGroup
	Stemcells      []Stemcell
}

// InstanceGroup is what the reconciler reads of an instance group.
type InstanceGroup struct {
	Name string
	propsHolder
}

// RecordInfo returns what an instance's records take from its manifest: the
// stemcells and the properties.blacksmith block. It parses only the
// top-level stemcells and properties blocks when they can be cut out of the
// text safely and tell as much as the whole manifest would (parsing a whole
// manifest is the costliest step of a cold run), else the whole manifest.
func RecordInfo(text string, full func() (*Manifest, error)) (*Manifest, error) {
	if err := checkBounds(text); err != nil {
		return nil, err
	}
	if block, ok := topLevelBlocks(text, "stemcells:", "properties:"); ok {
		if m, err := parse(block); err == nil && m.answersAlone(text) {
			return m, nil
		}
	}
	return full()
}

// answersAlone says whether m, cut from text, picks the properties.blacksmith
// block that the whole manifest would: a top-level one naming an instance
// wins over the instance groups'; without one, only a text that cannot hold
// a blacksmith key anywhere else (not even written with escapes) is enough.
func (m *Manifest) answersAlone(text string) bool {
	if p := m.Properties.Blacksmith; p != nil && p.InstanceID != "" {
		return true
	}
	return m.Properties.Blacksmith == nil && !strings.Contains(text, "blacksmith") && !strings.Contains(text, `\`)
}

// topLevelBlocks cuts the given top-level keys (each written "key:") and
// their values out of a single-document manifest; false when the text uses
// what a cut could misread (several documents, anchors, aliases, tags, tabs,
// line breaks other than "\n" and "\r\n",
// quoted or complex keys, directives, a key twice).
func topLevelBlocks(text string, keys ...string) (string, bool) {
	if strings.ContainsAny(text, "&*!\t\u0085\u2028\u2029") || strings.Contains(text, "\n---") || strings.Contains(text, "\n...") ||
		loneCR(text) || !rootAtColumnZero(text) {
		return "", false
	}
	var b strings.Builder
	found := map[string]bool{}
	in := false
	for line := range strings.Lines(text) {
		if in && strings.ContainsRune(" -#\r\n", rune(line[0])) {
			b.WriteString(line)
			continue
		}
		in = false
		if strings.ContainsRune(`"'?{[%`, rune(line[0])) { // a key the prefixes below could miss
			return "", false
		}
		for _, k := range keys {
			if strings.HasPrefix(line, k) {
				if found[k] {
					return "", false
				}
				found[k], in = true, true
				b.WriteString(line)
			}
		}
	}
	return b.String(), true // "" when there is none of the keys
}

// loneCR says whether text breaks a line with a carriage return alone, which
// YAML reads as a line break and the cut does not.
func loneCR(text string) bool {
	for i := strings.IndexByte(text, '\r'); i >= 0; i = strings.IndexByte(text, '\r') {
		if i+1 == len(text) || text[i+1] != '\n' {
			return true
		}
		text = text[i+1:]
	}
	return false
}

// rootAtColumnZero says whether the first line of text that is not blank, a
// comment or a bare "---" starts a key at column 0, as topLevelBlocks
// assumes: not an indented root mapping, a byte order mark or "--- {...}".
func rootAtColumnZero(text string) bool {
	for line := range strings.Lines(text) {
		if t := strings.TrimRight(line, " \r\n"); t == "" || t == "---" || line[0] == '#' {
			continue
		}
		c := line[0]
		return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	}
	return true
}

// Parse reads the parts of a manifest the reconciler uses.
func Parse(text string) (*Manifest, error) {
	if err := checkBounds(text); err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	m, err := parse(text)
	if err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	return m, nil
}

// parse reads a manifest's text within the bounds (see walk.go).
func parse(text string) (*Manifest, error) {
	doc, err := parseNode(text)
	if err != nil {
		return nil, err
	}
	return readManifest(doc)
}

// Blacksmith returns the manifest's properties.blacksmith block: the first,
// top-level before instance groups, that names an instance, else the first
// found; nil when there is none.
func (m *Manifest) Blacksmith() *Props {
	if m == nil {
		return nil
	}
	var first *Props
	for _, p := range m.blacksmithBlocks() {
		if p.InstanceID != "" {
			return p
		}
		if first == nil {
			first = p
		}
	}
	return first
}

// blacksmithBlocks lists the properties.blacksmith blocks, top-level first.
func (m *Manifest) blacksmithBlocks() []*Props {
	var out []*Props
	if p := m.Properties.Blacksmith; p != nil {
		out = append(out, p)
	}
	for _, g := range m.InstanceGroups {
		if p := g.Properties.Blacksmith; p != nil {
			out = append(out, p)
		}
	}
	return out
}

// PropsFor is the manifest's properties.blacksmith (top level, else the
// first instance group's) when it names instance id; nil otherwise.
func (m *Manifest) PropsFor(id string) *Props {
	for _, p := range m.blacksmithBlocks() {
		if p.InstanceID == id {
			return p
		}
	}
	return nil
}
