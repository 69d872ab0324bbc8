package config_test

import (
	"os"
	"reflect"
	"regexp"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

// The configuration reference (docs/configuration.md) is what operators read: every key and
// variable the loader knows must be in it, with the default the loader uses.
var _ = Describe("the configuration reference (docs/configuration.md)", func() {
	It("has a row for every key with its variable and default", func() {
		readme, err := os.ReadFile("../docs/configuration.md")
		Expect(err).NotTo(HaveOccurred())
		rows := map[string]string{}
		for _, line := range strings.Split(string(readme), "\n") {
			cells := strings.Split(line, "|")
			if len(cells) >= 5 && strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
				rows[strings.Trim(strings.TrimSpace(cells[1]), "`")] = line
			}
		}
		defaults := defaultValues()
		for _, ev := range config.Environment() {
			row, ok := rows[ev.Key]
			Expect(ok).To(BeTrue(), "docs/configuration.md has no row for %s", ev.Key)
			Expect(row).To(ContainSubstring("`"+ev.Name+"`"), "docs/configuration.md row for %s", ev.Key)
			Expect(row).To(ContainSubstring("| "+defaults[ev.Key]+" |"), "docs/configuration.md default for %s", ev.Key)
		}
	})
})

// defaultValues renders every default the way docs/configuration.md writes it.
func defaultValues() map[string]string {
	out, err := config.Default().YAML()
	Expect(err).NotTo(HaveOccurred())
	var tree map[string]any
	Expect(yaml.Unmarshal(out, &tree)).To(Succeed())
	values := map[string]string{}
	for _, ev := range config.Environment() {
		var cur any = tree
		for _, part := range strings.Split(ev.Key, ".") {
			if m, ok := cur.(map[string]any); ok {
				cur = m[part]
			}
		}
		values[ev.Key] = render(cur)
	}
	return values
}

func render(v any) string {
	switch x := v.(type) {
	case nil:
		return "(empty)"
	case string:
		if x == "" {
			return "(empty)"
		}
		return x
	case []any:
		if len(x) == 0 {
			return "(empty)"
		}
	}
	return strings.TrimSpace(func() string { b, _ := yaml.Marshal(v); return string(b) }())
}

// docs/design.md names every section of the configuration, in order.
var _ = Describe("the configuration's sections in docs/design.md", func() {
	It("are the top-level keys of the file, in order", func() {
		design, err := os.ReadFile("../docs/design.md")
		Expect(err).NotTo(HaveOccurred())
		var line string
		for _, l := range strings.Split(string(design), "\n") {
			if strings.HasPrefix(l, "Sections: ") {
				line = l
			}
		}
		Expect(line).NotTo(BeEmpty(), "docs/design.md has a line of sections")
		var named []string
		for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(line, -1) {
			named = append(named, m[1])
		}
		var keys []string
		t := reflect.TypeFor[config.Config]()
		for i := range t.NumField() {
			if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
				keys = append(keys, tag)
			}
		}
		Expect(named).To(Equal(keys))
	})
})
