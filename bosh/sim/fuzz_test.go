package sim

import (
	"testing"
)

// FuzzConfigDiff: whatever two posted texts hold, reading them as the
// Director's validate_manifest_yml does and diffing them does not panic; a
// text diffed with itself shows nothing, and every line of a diff is
// "added", "removed" or unchanged context.
func FuzzConfigDiff(f *testing.F) {
	f.Add(DefaultCloudConfig, DefaultCloudConfig+"- name: x\n")
	f.Add("azs: [{name: z1}]\n", "azs: [{name: z2}]\nproperties: {a: b}\n")
	f.Add("name: a\ninstance_groups: [{name: g, instances: 1, networks: [{name: default}], azs: [z9]}]\n", "")
	f.Fuzz(func(t *testing.T, a, b string) {
		before, errA := parseConfig(a)
		after, errB := parseConfig(b)
		if errA != nil || errB != nil {
			return
		}
		if d := yamlLineDiff(before, before, true); len(d) != 0 {
			t.Fatalf("a config diffed with itself: %v", d)
		}
		for _, l := range yamlLineDiff(before, after, true) {
			if s := l[1]; s != nil && s != "added" && s != "removed" {
				t.Fatalf("line status %v", s)
			}
		}
		var doc manifestDoc
		if after.Decode(&doc) == nil {
			cb := &configBook{db: newStore()}
			_ = cb.cloudNamesLocked().check(&doc) // any manifest is judged without panic
		}
	})
}

// FuzzParseErrandOutcome: whatever an -errand flag holds, reading it does
// not panic, and what it accepts is an outcome the simulator can script.
func FuzzParseErrandOutcome(f *testing.F) {
	f.Add("errand=smoke-tests,deployment=d,exit_code=1,stderr=boom")
	f.Add("errand=e,stdout=a\\nb")
	f.Add("exit_code=-1")
	f.Add("errand=,=,,")
	f.Fuzz(func(t *testing.T, spec string) {
		o, err := ParseErrandOutcome(spec)
		if err != nil {
			return
		}
		if err := o.check(); err != nil {
			t.Fatalf("accepted %q as %+v, which check refuses: %v", spec, o, err)
		}
	})
}
