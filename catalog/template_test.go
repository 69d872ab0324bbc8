package catalog_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

// renderParam renders text with .Params.v = v and decodes the output.
func renderParam(text string, v any) (map[string]any, string) {
	GinkgoHelper()
	t, err := catalog.ParseTemplate("manifest.yml", text)
	Expect(err).NotTo(HaveOccurred())
	out, err := t.Render(catalog.ManifestData{Params: map[string]any{"v": v}})
	Expect(err).NotTo(HaveOccurred())
	var m map[string]any
	Expect(yaml.Unmarshal(out, &m)).To(Succeed(), string(out))
	return m, string(out)
}

var _ = Describe("Template", func() {
	// Every value an attacker might send, in every place a template might
	// put it: the value comes back as it was and the structure stays.
	injections := []any{
		"100\n            hba_entries: [\"host all all 0.0.0.0/0 trust\"]",
		"100\naddons:\n- name: evil\n  jobs: []",
		"100\n---\nname: other",
		"a: b",
		"# comment",
		"{x: 1}",
		"]",
		"[1, 2",
		"&anchor x",
		"*alias",
		"!!binary aGk=",
		"...",
		"|\n  block",
		"'single'",
		`"double"`,
		"back\\slash",
		"tab\there",
		"\x7f del \u0085 nel \u0086 c1 \ufeff bom \u2028 ls \ufffe",
		"\x00 nul",
		"  leading and trailing  ",
		"",
		"null",
		"true",
		"0x1F",
		strings.Repeat("long ", 1000),
		float64(500),
		true,
		nil,
		[]any{"a\nb: c", 1.5, map[string]any{"k\n: v": "x\n- y"}},
		map[string]any{"nested": map[string]any{"deep": "v\nkey: injected"}},
	}

	templates := map[string]string{
		"block value":   "key: {{ .Params.v }}\nother: fixed\n",
		"nested value":  "a:\n  b:\n    key: {{ .Params.v }}\n    c: fixed\nother: fixed\n",
		"list item":     "list:\n- {{ .Params.v }}\n- fixed\nother: fixed\n",
		"flow sequence": "list: [{{ .Params.v }}, fixed]\nother: fixed\n",
		"flow mapping":  "map: {key: {{ .Params.v }}, c: fixed}\nother: fixed\n",
		"or default":    "key: {{ or (index .Params \"v\") 100 }}\nother: fixed\n",
		"old %q style":  "key: {{ printf \"%q\" .Params.v }}\nother: fixed\n",
		"piped %q":      "key: {{ .Params.v | printf \"%q\" }}\nother: fixed\n",
		"comment":       "# {{ .Params.v }}\nother: fixed\n",
	}

	It("writes every value as one YAML value wherever the template puts it", func() {
		for name, text := range templates {
			for _, v := range injections {
				m, out := renderParam(text, v)
				Expect(m).To(HaveKeyWithValue("other", "fixed"), "%s: %q", name, out)
				wantKeys := 2
				if name == "comment" {
					wantKeys = 1
				}
				Expect(m).To(HaveLen(wantKeys), "%s: %q", name, out)
				got := valueAt(name, m)
				switch {
				case name == "comment":
				case name == "or default" && (v == nil || v == "" || v == false):
					Expect(got).To(Equal(100), "%s: %q", name, out)
				case v == nil:
					Expect(got).To(BeNil(), "%s: %q", name, out)
				case name == "old %q style" || name == "piped %q":
					if s, ok := v.(string); ok {
						Expect(got).To(Equal(s), "%s: %q", name, out)
					}
				default:
					Expect(normalize(got)).To(Equal(normalize(v)), "%s: %q", name, out)
				}
			}
		}
	})

	It("keeps the structure of a value that is a list or a mapping", func() {
		m, _ := renderParam("key: {{ .Params.v }}\n", map[string]any{"a": []any{1.0, "two"}})
		Expect(m["key"]).To(Equal(map[string]any{"a": []any{1, "two"}}))
	})

	It("quotes a string built with printf as one value", func() {
		t, err := catalog.ParseTemplate("credentials.yml", `uri: {{ printf "redis://:%s@%s:6379" .Secrets.password .Host }}`+"\n")
		Expect(err).NotTo(HaveOccurred())
		m, err := t.RenderMapping(catalog.CredentialsData{Host: "10.0.0.1",
			ManifestData: catalog.ManifestData{Secrets: map[string]any{"password": "p@ss\nword: x"}}})
		Expect(err).NotTo(HaveOccurred())
		Expect(m).To(Equal(map[string]any{"uri": "redis://:p@ss\nword: x@10.0.0.1:6379"}))
	})

	It("leaves variable declarations and control structures alone", func() {
		m, _ := renderParam("{{ $x := .Params.v }}{{ if $x }}key: {{ $x }}{{ end }}\n{{ range $i, $e := .Params.v }}k{{ $i }}: {{ $e }}\n{{ end }}", []any{"a\nb: c"})
		Expect(m).To(Equal(map[string]any{"key": []any{"a\nb: c"}, "k0": "a\nb: c"}))
	})

	It("refuses to grow past the bound", func() {
		t, err := catalog.ParseTemplate("manifest.yml", "{{ range .Params.v }}{{ range $.Params.v }}{{ range $.Params.v }}x: {{ $.Params.v }}\n{{ end }}{{ end }}{{ end }}")
		Expect(err).NotTo(HaveOccurred())
		list := make([]any, 200)
		_, err = t.Render(catalog.ManifestData{Params: map[string]any{"v": list}})
		Expect(err).To(MatchError(catalog.ErrTooLarge))
	})

	It("says whether it reads the secrets", func() {
		t, _ := catalog.ParseTemplate("a", "x: {{ .Secrets.password }}")
		Expect(t.UsesSecrets()).To(BeTrue())
		t, _ = catalog.ParseTemplate("b", "x: {{ .Host }}")
		Expect(t.UsesSecrets()).To(BeFalse())
	})
})

// valueAt is where each of the templates above puts the value.
func valueAt(name string, m map[string]any) any {
	switch name {
	case "nested value":
		return m["a"].(map[string]any)["b"].(map[string]any)["key"]
	case "list item", "flow sequence":
		return m["list"].([]any)[0]
	case "flow mapping":
		return m["map"].(map[string]any)["key"]
	}
	return m["key"]
}

// normalize makes YAML's ints and JSON's floats compare alike.
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalize(x[i])
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}
