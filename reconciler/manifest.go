package reconciler

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

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
