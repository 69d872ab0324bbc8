package manifests_test

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

// jobSpec is a release job's spec file, with the keys BOSH knows.
type jobSpec struct {
	Name        string                    `yaml:"name"`
	Description string                    `yaml:"description"`
	Templates   map[string]string         `yaml:"templates"`
	Packages    []string                  `yaml:"packages"`
	Properties  map[string]map[string]any `yaml:"properties"`
	Consumes    []map[string]any          `yaml:"consumes"`
	Provides    []map[string]any          `yaml:"provides"`
}

// loadJobSpec reads the blacksmith job's spec; an unknown key is an error.
func loadJobSpec() jobSpec {
	GinkgoHelper()
	data, err := os.ReadFile(filepath.Join(jobDir, "spec"))
	Expect(err).NotTo(HaveOccurred())
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var spec jobSpec
	Expect(dec.Decode(&spec)).To(Succeed())
	return spec
}

// fileOnlyKeys are the matcher settings blacksmith.conf has and the
// environment does not.
var fileOnlyKeys = []string{"reconciler.releases", "reconciler.rules", "reconciler.ignore", "notifications.webhooks"}

// templateOnlyKeys are job properties that are no key of blacksmith.conf:
// the template turns them into the shape of another (bosh.more_directors
// makes bosh a list of Directors), or into the daemon's environment
// (memory_limit is GOMEMLIMIT, in bpm.yml).
var templateOnlyKeys = []string{"bosh.more_directors", "memory_limit"}

// configProperties are the job spec's properties that are keys of blacksmith.conf.
func configProperties(spec jobSpec) []string {
	var out []string
	for key := range spec.Properties {
		if !slices.Contains(templateOnlyKeys, key) {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// configDefaults returns every key of blacksmith.conf with its default, as
// config.Default().YAML() writes it: the keys config.Environment() lists plus
// the file-only ones.
func configDefaults() map[string]any {
	GinkgoHelper()
	out, err := config.Default().YAML()
	Expect(err).NotTo(HaveOccurred())
	var tree map[string]any
	Expect(yaml.Unmarshal(out, &tree)).To(Succeed())
	defaults := map[string]any{}
	var walk func(node map[string]any, prefix string)
	walk = func(node map[string]any, prefix string) {
		for k, v := range node {
			key := prefix + k
			if sub, ok := v.(map[string]any); ok && !slices.Contains(fileOnlyKeys, key) {
				walk(sub, key+".")
				continue
			}
			defaults[key] = v
		}
	}
	walk(tree, "")
	for _, ev := range config.Environment() {
		Expect(defaults).To(HaveKey(ev.Key), "config.Default().YAML() lacks %s", ev.Key)
	}
	return defaults
}

// readmeRow is one row of the configuration reference (docs/configuration.md).
type readmeRow struct {
	meaning  string // the meaning column, without Markdown backticks
	required bool
}

// readmeRows reads the configuration reference (../docs/configuration.md) by key.
func readmeRows() map[string]readmeRow {
	GinkgoHelper()
	text, err := os.ReadFile("../docs/configuration.md")
	Expect(err).NotTo(HaveOccurred())
	rows := map[string]readmeRow{}
	for line := range strings.SplitSeq(string(text), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) != 6 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "`") {
			continue // not a row of the table with key, environment, default, meaning
		}
		key := strings.Trim(strings.TrimSpace(cells[1]), "`")
		meaning := collapse(strings.ReplaceAll(cells[4], "`", ""))
		rows[key] = readmeRow{meaning: meaning, required: strings.Contains(meaning, "(required")}
	}
	return rows
}

// collapse joins the words of s with single spaces.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

var _ = Describe("the blacksmith job spec", func() {
	var spec jobSpec

	BeforeEach(func() { spec = loadJobSpec() })

	It("declares every key of blacksmith.conf, with the daemon's default, and nothing else", func() {
		defaults := configDefaults()
		Expect(configProperties(spec)).To(Equal(slices.Sorted(maps.Keys(defaults))))
		rows := readmeRows()
		for key, want := range defaults {
			prop := spec.Properties[key]
			if rows[key].required {
				Expect(prop).NotTo(HaveKey("default"), "%s is required: without a default, a manifest lacking it fails to render", key)
				continue
			}
			Expect(prop).To(HaveKey("default"), key)
			Expect(reflect.DeepEqual(prop["default"], want)).To(BeTrue(),
				"default of %s: the job spec says %#v, the daemon %#v", key, prop["default"], want)
		}
	})

	It("describes each property as the configuration reference (docs/configuration.md) does", func() {
		rows := readmeRows()
		for key, prop := range spec.Properties {
			Expect(slices.Collect(maps.Keys(prop))).To(HaveEach(BeElementOf("description", "default", "example")), key)
			desc, _ := prop["description"].(string)
			if slices.Contains(fileOnlyKeys, key) || slices.Contains(templateOnlyKeys, key) {
				Expect(desc).NotTo(BeEmpty(), key)
				continue
			}
			Expect(rows).To(HaveKey(key), "docs/configuration.md has no row for %s", key)
			Expect(collapse(desc)).To(HavePrefix(rows[key].meaning), "description of %s", key)
		}
	})

	It("lists every file of templates/, and only those, with the lifecycle scripts where BOSH runs them", func() {
		entries, err := os.ReadDir(filepath.Join(jobDir, "templates"))
		Expect(err).NotTo(HaveOccurred())
		var files []string
		for _, e := range entries {
			files = append(files, e.Name())
		}
		Expect(slices.Sorted(maps.Keys(spec.Templates))).To(Equal(files))
		Expect(slices.Collect(maps.Values(spec.Templates))).To(ContainElements(
			"config/bpm.yml", "config/blacksmith.conf", "bin/pre-start", "bin/drain"))
	})

	It("uses packages of this release", func() {
		Expect(spec.Name).To(Equal("blacksmith"))
		Expect(spec.Packages).NotTo(BeEmpty())
		for _, pkg := range spec.Packages {
			Expect(filepath.Join(releaseDir, "packages", pkg, "spec")).To(BeAnExistingFile())
		}
	})
})
