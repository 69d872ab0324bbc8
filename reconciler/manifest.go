package reconciler

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// blacksmithProps are the properties.blacksmith keys that tie a deployment to
// a service instance (matcher strategy 2).
type blacksmithProps struct {
	ServiceID  string `yaml:"service_id"`
	PlanID     string `yaml:"plan_id"`
	InstanceID string `yaml:"instance_id"`
}

// propsHolder is anything with a properties.blacksmith block.
type propsHolder struct {
	Properties struct {
		Blacksmith *blacksmithProps `yaml:"blacksmith"`
	} `yaml:"properties"`
}

// stemcellRef is one entry of a manifest's stemcells.
type stemcellRef struct {
	Alias   string `yaml:"alias"`
	OS      string `yaml:"os"`
	Name    string `yaml:"name"`
	Version string `yaml:"version"`
}

// manifestInfo is what the reconciler reads from a deployment manifest.
type manifestInfo struct {
	Name           string `yaml:"name"`
	propsHolder    `yaml:",inline"`
	InstanceGroups []struct {
		Name        string `yaml:"name"`
		propsHolder `yaml:",inline"`
	} `yaml:"instance_groups"`
	Stemcells []stemcellRef `yaml:"stemcells"`
}

// stemcellsOf returns a manifest's stemcells. It parses only the top-level
// stemcells block when that can be cut out of the text safely (parsing a
// whole manifest is the costliest step of a cold run), else the whole manifest.
func stemcellsOf(text string, full func() (*manifestInfo, error)) ([]stemcellRef, error) {
	if block, ok := stemcellsBlock(text); ok {
		var m struct {
			Stemcells []stemcellRef `yaml:"stemcells"`
		}
		if yaml.Unmarshal([]byte(block), &m) == nil {
			return m.Stemcells, nil
		}
	}
	info, err := full()
	if err != nil {
		return nil, err
	}
	return info.Stemcells, nil
}

// stemcellsBlock cuts the top-level "stemcells:" key and its value out of a
// single-document manifest; false when the text uses what a cut could
// misread (several documents, anchors, aliases, tags, tabs, the key twice).
func stemcellsBlock(text string) (string, bool) {
	if strings.ContainsAny(text, "&*!\t") || strings.Contains(text, "\n---") || strings.Contains(text, "\n...") {
		return "", false
	}
	var b strings.Builder
	found, in := false, false
	for line := range strings.Lines(text) {
		if in && strings.ContainsRune(" -#\r\n", rune(line[0])) {
			b.WriteString(line)
			continue
		}
		in = false
		if strings.HasPrefix(line, "stemcells:") {
			if found {
				return "", false
			}
			found, in = true, true
			b.WriteString(line)
		}
	}
	return b.String(), true // "" when there is no stemcells key
}

// parseManifest reads the parts of a manifest the reconciler uses.
func parseManifest(text string) (*manifestInfo, error) {
	var m manifestInfo
	if err := yaml.Unmarshal([]byte(text), &m); err != nil {
		return nil, fmt.Errorf("parsing manifest: %w", err)
	}
	return &m, nil
}

// blacksmith returns the manifest's properties.blacksmith block: the first,
// top-level before instance groups, that names an instance, else the first
// found; nil when there is none.
func (m *manifestInfo) blacksmith() *blacksmithProps {
	if m == nil {
		return nil
	}
	var first *blacksmithProps
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
func (m *manifestInfo) blacksmithBlocks() []*blacksmithProps {
	var out []*blacksmithProps
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

// sha256Hex is the hex SHA-256 of text.
func sha256Hex(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}
