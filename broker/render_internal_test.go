package broker

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"
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
	data := ManifestData{DeploymentName: "p-i", InstanceID: "i", ServiceID: "s", PlanID: "p",
		Params: map[string]any{"blacksmith": "overridden?", "size": 3}, Secrets: map[string]any{"password": "pw"}}

	It("names the deployment, merges parameters and sets properties.blacksmith last", func() {
		out, err := renderManifest("name: x\nproperties: {size: 1, keep: true}\npw: {{ .Secrets.password }}\nn: {{ default 1 .Params.missing }}\n", data)
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
		_, err := renderManifest("- a list", data)
		Expect(err).To(MatchError(ContainSubstring("not a YAML mapping")))
		_, err = renderManifest("{{ .Nope }}", data)
		Expect(err).To(MatchError(ContainSubstring("rendering manifest template")))
	})
})
