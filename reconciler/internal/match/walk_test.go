package match

import (
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The YAML package's own decoding of the fields the reconciler reads: the
// reference the node walk (walk.go) must agree with, on manifests small
// enough for its quadratic duplicate check.
type (
	refProps struct {
		ServiceID        string `yaml:"service_id"`
		PlanID           string `yaml:"plan_id"`
		InstanceID       string `yaml:"instance_id"`
		OrganizationGUID string `yaml:"organization_guid"`
		SpaceGUID        string `yaml:"space_guid"`
		Parameters       any    `yaml:"parameters"`
	}
	refHolder struct {
		Properties struct {
			Blacksmith *refProps `yaml:"blacksmith"`
		} `yaml:"properties"`
	}
	refManifest struct {
		Name           string `yaml:"name"`
		refHolder      `yaml:",inline"`
		InstanceGroups []struct {
			Name      string `yaml:"name"`
			refHolder `yaml:",inline"`
		} `yaml:"instance_groups"`
		Stemcells []struct {
			Alias   string `yaml:"alias"`
			OS      string `yaml:"os"`
			Name    string `yaml:"name"`
			Version string `yaml:"version"`
		} `yaml:"stemcells"`
	}
)

// asManifest converts the reference's answer to a Manifest.
func (r *refManifest) asManifest() *Manifest {
	props := func(p *refProps) *Props {
		if p == nil {
			return nil
		}
		return &Props{ServiceID: p.ServiceID, PlanID: p.PlanID, InstanceID: p.InstanceID,
			OrganizationGUID: p.OrganizationGUID, SpaceGUID: p.SpaceGUID, Parameters: p.Parameters}
	}
	m := &Manifest{Name: r.Name}
	m.Properties.Blacksmith = props(r.Properties.Blacksmith)
	for _, g := range r.InstanceGroups {
		ig := InstanceGroup{Name: g.Name}
		ig.Properties.Blacksmith = props(g.Properties.Blacksmith)
		m.InstanceGroups = append(m.InstanceGroups, ig)
	}
	for _, s := range r.Stemcells {
		m.Stemcells = append(m.Stemcells, Stemcell{Alias: s.Alias, OS: s.OS, Name: s.Name, Version: s.Version})
	}
	return m
}

// walkSeeds are the shapes where a hand-written walk could part from the
// YAML package: merges, aliases, nulls, quoted and tagged keys, wrong kinds.
var walkSeeds = []string{
	seedDirectorManifest, seedBlacksmithManifest, "", "---\n...\n", "~\n", "[a]\n", "x\n",
	"name: a\nname: b\n", "? [a]\n: 1\n? [b]\n: 2\n", "\"name\": a\n", "!!str name: a\n", "name: !!binary aGk=\n",
	"base: &b {name: n, properties: {blacksmith: {instance_id: i}}}\n<<: *b\n",
	"base: &b {name: n}\nother: &o {name: m, stemcells: [{os: x}]}\n<<: [*b, *o]\n",
	"base: &b {name: n}\n<<: *b\nname: own\n", "<<: {name: n}\n<<: {name: m}\n", "<<: [a]\n", "<<: 1\n",
	"properties:\n  <<: {blacksmith: {plan_id: p}}\n", "properties: ~\n", "properties:\n  blacksmith: ~\n",
	"properties:\n  blacksmith:\n    instance_id: 5\n    plan_id: true\n    parameters: {a: [1, {b: c}], 1: x}\n",
	"properties:\n  blacksmith:\n    parameters: &p {a: 1}\n    service_id: *p\n",
	"properties:\n  blacksmith: {parameters: ~}\n", "properties:\n  blacksmith: {parameters: [1]}\n",
	"instance_groups: [~, {name: g}, {name: h, properties: {blacksmith: {instance_id: j}}}]\n",
	"instance_groups: {a: 1}\n", "instance_groups: [1]\n", "stemcells: [{version: [1]}]\n", "stemcells: x\n",
	"name: [a]\n", "name: {a: 1}\n", "name: ~\n", "name: 1.50\n", "name: 0x1F\n", "name: 'a'\nname2: *x\n",
}

// FuzzWalkMatchesYAML: for any manifest, the walk gives what the YAML
// package's decoding gives, or both fail.
func FuzzWalkMatchesYAML(f *testing.F) {
	for _, s := range walkSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 4096 || strings.Count(text, "*") > 16 {
			return // the reference is quadratic in keys and exponential in aliases
		}
		var ref refManifest
		refErr := yaml.Unmarshal([]byte(text), &ref)
		got, err := parse(text)
		switch {
		case refErr != nil && err == nil:
			t.Fatalf("the YAML package fails (%v), the walk gives %+v", refErr, got)
		case refErr == nil && err != nil:
			t.Fatalf("the YAML package gives %+v, the walk fails: %v", ref, err)
		case err == nil:
			want := ref.asManifest()
			if strings.Contains(text, "<<") || strings.Contains(text, "!") {
				// Parameters are built by value (bounds.go), which takes
				// merge keys as plain keys and resolves keys by value, not tag.
				dropParameters(got)
				dropParameters(want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("the walk gives %#v, the YAML package %#v", got, want)
			}
		}
	})
}

// dropParameters clears the parameters of every block of m.
func dropParameters(m *Manifest) {
	for _, p := range m.blacksmithBlocks() {
		p.Parameters = nil
	}
}
