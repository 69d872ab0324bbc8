package catalog_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// FuzzTemplateValue: whatever string a platform user sends, the rendered
// manifest has the template's keys and no other, and the value comes back
// as sent.
func FuzzTemplateValue(f *testing.F) {
	for _, seed := range []string{"100\n  hba_entries: [x]", "a: b", "\x7f\u0085\ufeff", "]}", "'", `"`, "\\", "", "null", "- x", "&a", "*a", "%YAML 1.2"} {
		f.Add(seed)
	}
	templates := []string{
		"key: {{ .Params.v }}\nother: fixed\n",
		"list: [{{ .Params.v }}, fixed]\nother: fixed\n",
		"m:\n  key: {{ printf \"%s-x\" .Params.v }}\nother: fixed\n",
	}
	parsed := make([]*catalog.Template, len(templates))
	for i, text := range templates {
		t, err := catalog.ParseTemplate("manifest.yml", text)
		if err != nil {
			f.Fatal(err)
		}
		parsed[i] = t
	}
	f.Fuzz(func(t *testing.T, v string) {
		for i, tmpl := range parsed {
			out, err := tmpl.Render(catalog.ManifestData{Params: map[string]any{"v": v}})
			if err != nil {
				t.Fatalf("template %d: %v", i, err)
			}
			var m map[string]any
			if err := yaml.Unmarshal(out, &m); err != nil {
				t.Fatalf("template %d: %q does not parse: %v", i, out, err)
			}
			if len(m) != 2 || m["other"] != "fixed" {
				t.Fatalf("template %d: structure changed: %q", i, out)
			}
			if !utf8.ValidString(v) {
				continue
			}
			var got any
			switch i {
			case 0:
				got = m["key"]
			case 1:
				got = m["list"].([]any)[0]
			case 2:
				got, v = m["m"].(map[string]any)["key"], v+"-x"
			}
			if got != v {
				t.Fatalf("template %d: got %q back for %q", i, got, v)
			}
		}
	})
}

// FuzzLoadPlan: any plan.yml and manifest.yml load or give problems naming
// the files; never a panic.
func FuzzLoadPlan(f *testing.F) {
	f.Add("id: p\nname: p\ndescription: d\n", "name: {{ .DeploymentName }}\n")
	f.Add(schemaPlan, "x: {{ index .Params \"a\" }}\n")
	f.Add("id: p\nname: p\ndescription: d\nschemas: {service_instance: {create: {parameters: {$ref: '#/definitions/x'}}}}\n", "{{ range . }}{{ end }}")
	f.Add("id: p\nname: p\ndescription: d\nlimit: -1\nupdatable: yes\n", "- a\n")
	f.Add("&a [*a, *a]", "{{ template \"x\" }}")
	f.Add("id: p\nname: p\ndescription: d\nmaximum_polling_duration: 600\npolling_interval: 599\n", "a: b\n")
	f.Add("id: p\nname: p\ndescription: d\nmaximum_polling_duration: 9223372036854775808\npolling_interval: -0\n", "a: b\n")
	f.Add("id: p\nname: p\ndescription: d\npolling_interval: [1]\nmaximum_polling_duration: {a: 1}\n", "a: b\n")
	f.Fuzz(func(t *testing.T, plan, manifest string) {
		dir := t.TempDir()
		files := map[string]string{
			"s/service.yml": "id: s\nname: s\ndescription: d\n",
			"s/p/plan.yml":  plan, "s/p/manifest.yml": manifest,
		}
		for name, content := range files {
			path := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c, err := catalog.Load(dir)
		var p *catalog.Problems
		switch {
		case err == nil && c == nil:
			t.Fatal("no catalog and no error")
		case err != nil && (!errors.As(err, &p) || len(p.List) == 0):
			t.Fatalf("error is not a list of problems: %v", err)
		case err == nil:
			pl := c.Services[0].Plans[0]
			if d := pl.MaximumPollingDuration; d != 0 && (d < catalog.MinPollingDuration || d > catalog.MaxPollingDuration) {
				t.Fatalf("maximum_polling_duration %d loaded out of bounds", d)
			}
			if i := pl.Interval(); i < 1 || i > catalog.MaxPollingInterval {
				t.Fatalf("polling interval %d loaded out of bounds", i)
			}
		}
	})
}
