package operation

import (
	"strings"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
)

// FuzzClassify feeds the Director's diff lines (hostile: a shared
// Director's content) to Classify: it must not panic, and every change it
// names has a class and no more than a bounded detail.
func FuzzClassify(f *testing.F) {
	f.Add("instance_groups:\n- name: redis\n  networks:\n  - name: services", "  - name: default", "  - name: services")
	f.Add("properties:", "  password: ((p))", "  password: x")
	f.Add("- \"quoted: key\": v", "'a': b", "- -")
	f.Fuzz(func(t *testing.T, context, added, removed string) {
		var lines []bosh.DiffLine
		for _, l := range strings.Split(context, "\n") {
			lines = append(lines, bosh.DiffLine{Text: l})
		}
		lines = append(lines, bosh.DiffLine{Text: added, Change: "added"}, bosh.DiffLine{Text: removed, Change: "removed"})
		for _, c := range Classify(lines) {
			if c.Class == "" {
				t.Fatalf("a change without a class: %+v", c)
			}
			if len(c.Detail) > 2000 {
				t.Fatalf("a detail of %d bytes", len(c.Detail))
			}
		}
	})
}

// FuzzManifests feeds two manifests (what a Director runs is hostile) to
// Compare and KeepVariables: no panic; what KeepVariables answers parses.
func FuzzManifests(f *testing.F) {
	f.Add("name: a\ninstance_groups:\n- name: r\n  networks: [{name: s}]\n  jobs: [{name: j, release: x, properties: {p: ((v))}}]\nvariables: [{name: v}]\n",
		"name: a\nreleases: [{name: x}]\ninstance_groups:\n- name: r\n  networks: [{name: d}]\n  jobs: [{name: j, release: x, properties: {p: lit}}]\n")
	f.Add("a: &x [*x]", "a: 1")
	f.Add("- 1", "{")
	f.Fuzz(func(t *testing.T, running, rendered string) {
		_, _ = Compare(running, rendered)
		out, _, err := KeepVariables(running, rendered)
		if err == nil {
			if _, err := parse(out, "the kept manifest"); err != nil && out != rendered {
				t.Fatalf("KeepVariables answered a manifest that does not parse: %v", err)
			}
		}
	})
}
