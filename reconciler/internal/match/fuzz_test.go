package match

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// Native Go fuzz targets for the manifests read from the Director; run one with e.g.
//
//	go test ./reconciler/internal/match -run '^$' -fuzz '^FuzzRecordInfo$' -fuzztime 60s

// seedDirectorManifest is the manifest a Director answers for a deployment
// blacksmith did not create (no properties.blacksmith block).
const seedDirectorManifest = `---
name: service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b
releases:
- name: redis
  version: 16.1.0
stemcells:
- alias: default
  os: ubuntu-jammy
  version: "1.506"
instance_groups:
- name: redis
  instances: 1
  azs: [z1]
  jobs:
  - name: redis
    release: redis
  vm_type: small
  stemcell: default
  networks:
  - name: services
update:
  canaries: 1
  max_in_flight: 1
  canary_watch_time: 30000-240000
  update_watch_time: 30000-240000
`

// seedBlacksmithManifest is a manifest as the broker renders it (keys
// sorted, properties.blacksmith last in properties).
const seedBlacksmithManifest = `instance_groups:
    - azs:
        - z1
        - z2
      instances: 3
      jobs:
        - name: redis
          properties:
            redis:
                password: ((redis_password))
          release: redis
      name: redis
      networks:
        - name: services
      persistent_disk_type: default
      stemcell: default
      vm_type: small
name: redis-large-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b
properties:
    blacksmith:
        instance_id: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b
        organization_guid: 6a1e0b1c-93d4-4f6e-8c2b-3c1d0e9f8a7b
        parameters:
            maxmemory: 512mb
        plan_id: redis-large
        service_id: redis
        space_guid: 2d4f6a8c-1b3e-4d5f-9a7c-8e6f4d2b0a1c
    redis:
        maxmemory_policy: allkeys-lru
releases:
    - name: redis
      version: 16.1.0
stemcells:
    - alias: default
      os: ubuntu-jammy
      version: "1.506"
update:
    canaries: 1
    max_in_flight: 1
`

// FuzzRecordInfo: any text is read without a panic, and when the whole
// manifest parses, the cheaper cut that recordInfo may take gives the same
// stemcells and properties.blacksmith block.
func FuzzRecordInfo(f *testing.F) {
	for _, s := range []string{
		seedDirectorManifest, seedBlacksmithManifest, strings.ReplaceAll(seedBlacksmithManifest, "\n", "\r\n"),
		"name: a\nproperties:\n  blacksmith: {plan_id: p1}\ninstance_groups:\n- name: g\n  properties:\n    blacksmith: {plan_id: p2, instance_id: i2}\n",
		"stemcells: [{alias: d, os: o, version: '1'}]\n---\nname: b\n",
		"x: &v '2'\nstemcells:\n- {alias: d, os: o, version: *v}\n",
		"name: a\n\"properties\":\n  blacksmith: {instance_id: i}\n", "properties:\n  blacksmith: \"x\"\n",
		"properties:\n  blacksmith:\n    instance_id: [i]\n", "", "\n", "---\n...\n", "stemcells: [\n",
		// hand-written styles: JSON-like flow collections and a quoted text over several lines
		"name: d\ntags: {\n  team: data,\n  env: prod\n}\nstemcells:\n- alias: default\n  os: ubuntu-jammy\n  version: \"1.506\"\n",
		"name: d\nazs: [\n  z1,\n  z2\n]\nproperties:\n  blacksmith: {instance_id: i1, plan_id: p1}\n",
		"name: d\ndescription: \"Redis for the\n  data team\"\nstemcells: [{alias: default, os: ubuntu-jammy, version: latest}]\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		parsedWhole := false
		got, err := RecordInfo(text, func() (*Manifest, error) { parsedWhole = true; return Parse(text) })
		full, fullErr := Parse(text)
		if fullErr != nil {
			if parsedWhole && err == nil {
				t.Fatalf("the whole manifest fails to parse (%v) and recordInfo gives no error", fullErr)
			}
			return
		}
		if err != nil {
			t.Fatalf("the whole manifest parses, recordInfo fails: %v", err)
		}
		if !same(got.Stemcells, full.Stemcells) {
			t.Fatalf("stemcells %+v, the whole manifest says %+v", got.Stemcells, full.Stemcells)
		}
		if g, w := got.Blacksmith(), full.Blacksmith(); (g == nil) != (w == nil) || (g != nil && !same(*g, *w)) {
			t.Fatalf("blacksmith block %+v, the whole manifest says %+v", g, w)
		}
	})
}

// FuzzAsksLatest: any text is read without a panic, and when the whole
// manifest parses, the cheaper cut gives the same answer.
func FuzzAsksLatest(f *testing.F) {
	for _, s := range []string{
		seedDirectorManifest, seedBlacksmithManifest, strings.ReplaceAll(seedDirectorManifest, "16.1.0", "latest"),
		"releases:\n- {name: a, version: 16.latest}\nstemcells:\n- {alias: d, os: o, version: latest}\n",
		"x: &v latest\nreleases:\n- {name: b, version: *v}\n", "releases: [{name: a, version: \"l\\x61test\"}]\n",
		"stemcells: [{alias: d, name: n, version: latest}]\n---\nreleases: []\n", "releases:x\nlatest: 1\n", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, err := AsksLatest(text)
		whole, wholeErr := readLatest(text)
		if checkBounds(text) != nil || wholeErr != nil {
			return
		}
		if err != nil {
			t.Fatalf("the whole manifest parses, AsksLatest fails: %v", err)
		}
		if !same(got, whole) {
			t.Fatalf("AsksLatest %+v, the whole manifest says %+v", got, whole)
		}
	})
}

// FuzzManifestInstanceID: a manifest with a well-formed properties.blacksmith
// block, in any of the layouts below, yields the instance and plan it names.
func FuzzManifestInstanceID(f *testing.F) {
	for layout := range uint8(32) {
		f.Add("0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", "redis-small", "allkeys-lru", layout)
	}
	f.Add("null", "true", "blacksmith:", uint8(1))
	f.Add(`a"b\c`, "p: q", "x\ny", uint8(2))
	f.Add("é\u2028\t", "#", "&a *a", uint8(3))
	f.Fuzz(func(t *testing.T, instanceID, planID, other string, layout uint8) {
		instanceID, planID = strings.ToValidUTF8(instanceID, "?"), strings.ToValidUTF8(planID, "?")
		other = strings.ToValidUTF8(other, "?")
		if instanceID == "" {
			instanceID = "i" // a block without an instance id names none
		}
		text, ok := manifestLayout(instanceID, planID, other, layout)
		if !ok {
			return // yaml.v3 wrote other ids than it was given: the text names those
		}
		got, err := RecordInfo(text, func() (*Manifest, error) { return Parse(text) })
		if err != nil {
			t.Fatalf("recordInfo: %v\n%s", err, text)
		}
		full, err := Parse(text)
		if err != nil {
			t.Fatalf("parseManifest: %v\n%s", err, text)
		}
		for _, m := range []*Manifest{got, full} {
			p := m.Blacksmith()
			if p == nil || p.InstanceID != instanceID || p.PlanID != planID {
				t.Fatalf("block %+v, want instance %q of plan %q\n%s", p, instanceID, planID, text)
			}
		}
	})
}

// manifestLayout writes a manifest whose blacksmith block names instanceID
// and planID, with other as the value of another property; false when it
// cannot. The low 3 bits of layout pick where and how the block is written,
// bit 3 writes CRLF line ends, bit 4 starts the document with "---".
func manifestLayout(instanceID, planID, other string, layout uint8) (string, bool) {
	id, plan, o := yamlScalar(instanceID), yamlScalar(planID), yamlScalar(other)
	var text string
	switch layout % 8 {
	case 0: // as the broker renders it
		var ok bool
		if text, ok = brokerRendered(instanceID, planID, other); !ok {
			return "", false
		}
	case 1: // block style, last
		text = "name: d\nstemcells:\n- alias: default\n  os: ubuntu-jammy\n  version: \"1.506\"\n" +
			"properties:\n  other: " + o + "\n  # the instance\n  blacksmith:\n    service_id: redis\n" +
			"    plan_id: " + plan + "\n    instance_id: " + id + "\n"
	case 2: // flow style, first
		text = "properties: {other: " + o + ", blacksmith: {plan_id: " + plan + ", instance_id: " + id + "}}\nname: d\n"
	case 3: // under an instance group only
		text = "name: d\ninstance_groups:\n- name: redis\n  properties:\n    blacksmith:\n      plan_id: " + plan +
			"\n      instance_id: " + id + "\nproperties:\n  other: " + o + "\n"
	case 4: // a top-level block naming no instance, the instance group's naming it
		text = "properties:\n  blacksmith: {service_id: redis}\n  other: " + o + "\ninstance_groups:\n- name: g\n" +
			"  properties:\n    blacksmith: {instance_id: " + id + ", plan_id: " + plan + "}\n"
	case 5: // the top-level block wins over an instance group's
		text = "instance_groups:\n- name: g\n  properties:\n    blacksmith: {instance_id: other-instance, plan_id: other-plan}\n" +
			"properties:\n    blacksmith:\n        instance_id: " + id + "\n        plan_id: " + plan + "\nname: d\nother: " + o + "\n"
	case 6: // indented sequence of stemcells, comments and blank lines around
		text = "# rendered\nname: d\n\nstemcells:\n  - alias: default\n    os: ubuntu-noble\n    version: latest\n\n" +
			"properties:\n  blacksmith:\n\n    instance_id: " + id + " # the instance\n    plan_id: " + plan + "\n  x: " + o + "\n"
	default: // the block's keys in flow style across lines
		text = "properties:\n  blacksmith: {\n    instance_id: " + id + ",\n    plan_id: " + plan + "\n  }\n  o: " + o + "\n"
	}
	if layout&8 != 0 {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if layout&16 != 0 {
		text = "---\n" + text
	}
	return text, true
}

// brokerRendered is a manifest encoded as the broker encodes one; false
// when yaml.v3 does not write the ids it is given, as for a string that
// starts with a line break ("\n" is written "|4+" and read back "").
func brokerRendered(instanceID, planID, other string) (string, bool) {
	b, err := yaml.Marshal(map[string]any{
		"name":      planID + "-" + instanceID,
		"stemcells": []any{map[string]any{"alias": "default", "os": "ubuntu-jammy", "version": "1.506"}},
		"properties": map[string]any{"other": other, "blacksmith": map[string]any{
			"service_id": "redis", "plan_id": planID, "instance_id": instanceID,
			"parameters": map[string]any{"note": other},
		}},
	})
	if err != nil {
		panic(err)
	}
	var back struct {
		Properties struct {
			Blacksmith map[string]any `yaml:"blacksmith"`
		} `yaml:"properties"`
	}
	if yaml.Unmarshal(b, &back) != nil || back.Properties.Blacksmith["instance_id"] != instanceID ||
		back.Properties.Blacksmith["plan_id"] != planID {
		return "", false
	}
	return string(b), true
}

// plainScalar is what yamlScalar writes unquoted, as real instance and plan ids are.
var plainScalar = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// yamlScalar writes s as a YAML string: plain when it is id-like, else
// double-quoted with every character outside printable ASCII escaped.
func yamlScalar(s string) string {
	if plainScalar.MatchString(s) && !strings.EqualFold(s, "null") {
		return s
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= ' ' && r <= '~':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// same is reflect.DeepEqual, except that it takes NaN (a YAML .nan in the
// parameters) as equal to itself.
func same(a, b any) bool {
	return reflect.DeepEqual(a, b) || fmt.Sprintf("%#v", a) == fmt.Sprintf("%#v", b)
}

// uuidSuffixOracle is the regular expression splitUUID replaced (for speed):
// the fuzz target holds the two to the same answers.
var uuidSuffixOracle = regexp.MustCompile(`^(.+)-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$`)

// FuzzSplitUUID: splitUUID answers as the regular expression it replaced.
func FuzzSplitUUID(f *testing.F) {
	for _, s := range []string{"redis-small-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", "-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
		"x-0F1E2D3C-4B5A-6978-8A9B-0C1D2E3F4A5B", "a\n-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", "x-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5",
		"x-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5g", "x_0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", "x-0f1e2d3c-4b5a-6978-8a9b0-c1d2e3f4a5b",
		"é-0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", "", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		prefix, id, ok := splitUUID(name)
		sub := uuidSuffixOracle.FindStringSubmatch(name)
		if ok != (sub != nil) || ok && (prefix != sub[1] || id != sub[2]) {
			t.Fatalf("splitUUID(%q) = %q, %q, %v; the expression says %q", name, prefix, id, ok, sub)
		}
	})
}
