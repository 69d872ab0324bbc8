package broker

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

var _ = DescribeTable("deepMerge",
	func(dst, src, want map[string]any) {
		Expect(deepMerge(dst, src)).To(Equal(want))
	},
	Entry("nil into nil", nil, nil, map[string]any{}),
	Entry("new keys are added", map[string]any{"a": 1}, map[string]any{"b": 2}, map[string]any{"a": 1, "b": 2}),
	Entry("scalars replace", map[string]any{"a": 1}, map[string]any{"a": "x"}, map[string]any{"a": "x"}),
	Entry("lists replace", map[string]any{"a": []any{1, 2}}, map[string]any{"a": []any{3}}, map[string]any{"a": []any{3}}),
	Entry("maps merge recursively",
		map[string]any{"m": map[string]any{"x": 1, "y": map[string]any{"z": 1, "w": 2}}},
		map[string]any{"m": map[string]any{"y": map[string]any{"z": 9}}},
		map[string]any{"m": map[string]any{"x": 1, "y": map[string]any{"z": 9, "w": 2}}}),
	Entry("a map replaces a scalar", map[string]any{"a": 1}, map[string]any{"a": map[string]any{"b": 1}}, map[string]any{"a": map[string]any{"b": 1}}),
	Entry("null replaces", map[string]any{"a": 1}, map[string]any{"a": nil}, map[string]any{"a": nil}),
)

var _ = Describe("renderManifest", func() {
	data := catalog.ManifestData{DeploymentName: "p-i", InstanceID: "i", ServiceID: "s", PlanID: "p",
		Params: map[string]any{"blacksmith": "overridden?", "size": 3}, Secrets: map[string]any{"password": "pw"}}

	tmpl := func(text string) *catalog.Template {
		GinkgoHelper()
		t, err := catalog.ParseTemplate("manifest", text)
		Expect(err).NotTo(HaveOccurred())
		return t
	}

	It("names the deployment, merges parameters and sets properties.blacksmith last", func() {
		out, err := renderManifest(tmpl("name: x\nproperties: {size: 1, keep: true}\npw: {{ .Secrets.password }}\nn: {{ default 1 .Params.missing }}\n"), data, true)
		Expect(err).NotTo(HaveOccurred())
		var m map[string]any
		Expect(yaml.Unmarshal(out, &m)).To(Succeed())
		Expect(m["name"]).To(Equal("p-i"))
		Expect(m["pw"]).To(Equal("pw"))
		Expect(m["n"]).To(Equal(1))
		props := m["properties"].(map[string]any)
		Expect(props["size"]).To(Equal(3))
		Expect(props["keep"]).To(BeTrue())
		Expect(props["blacksmith"]).To(HaveKeyWithValue("instance_id", "i"))
		Expect(props["blacksmith"]).To(HaveKeyWithValue("service_id", "s"))
		Expect(props["blacksmith"]).To(HaveKeyWithValue("plan_id", "p"))
	})

	It("reports a template that does not render as a mapping", func() {
		_, err := renderManifest(tmpl("- a list"), data, true)
		Expect(err).To(MatchError(ContainSubstring("not a YAML mapping")))
		_, err = renderManifest(tmpl("{{ .Nope }}"), data, true)
		Expect(err).To(MatchError(ContainSubstring("rendering manifest template")))
	})
})

var _ = Describe("renderManifest without merge_parameters", func() {
	It("puts parameters only where the template does, and in properties.blacksmith", func() {
		t, err := catalog.ParseTemplate("manifest", "name: x\nproperties: {size: {{ .Params.size }}}\n")
		Expect(err).NotTo(HaveOccurred())
		data := catalog.ManifestData{DeploymentName: "p-i", InstanceID: "i", PlanID: "p",
			Params: map[string]any{"size": 3, "hba_entries": []any{"host all all 0.0.0.0/0 trust"}}}
		out, err := renderManifest(t, data, false)
		Expect(err).NotTo(HaveOccurred())
		var m struct{ Properties map[string]any }
		Expect(yaml.Unmarshal(out, &m)).To(Succeed())
		Expect(m.Properties).To(HaveKeyWithValue("size", 3))
		Expect(m.Properties).NotTo(HaveKey("hba_entries"))
		Expect(m.Properties["blacksmith"]).To(HaveKeyWithValue("parameters", HaveKey("hba_entries")))
	})
})
