package match

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("reading what the records take from a manifest", func() {
	DescribeTable("gives what parsing the whole manifest gives",
		func(text string, cut bool) {
			parsedWhole := false
			got, err := RecordInfo(text, func() (*Manifest, error) { parsedWhole = true; return Parse(text) })
			Expect(err).NotTo(HaveOccurred())
			Expect(parsedWhole).To(Equal(!cut), "whether the whole manifest was parsed")
			full, err := Parse(text)
			Expect(err).NotTo(HaveOccurred())
			Expect(got.Stemcells).To(Equal(full.Stemcells))
			Expect(got.Blacksmith()).To(Equal(full.Blacksmith()))
		},
		Entry("block style between other keys", "---\nname: a\nstemcells:\n- alias: default\n  os: ubuntu-jammy\n  version: \"1.506\"\n# note\n\ninstance_groups:\n- name: x\n  stemcell: default\n", true),
		Entry("indented sequence, last key", "name: a\nreleases: []\nstemcells:\n  - alias: default\n    os: ubuntu-noble\n    version: latest\n", true),
		Entry("flow style on one line", "stemcells: [{alias: d, name: bosh-warden-boshlite-ubuntu-jammy-go_agent, version: '1.1'}]\nname: a\n", true),
		Entry("none at all", "name: a\n", true),
		Entry("an anchor: whole manifest parsed", "x: &v '2'\nstemcells:\n- {alias: d, os: o, version: *v}\n", false),
		Entry("two documents: whole manifest parsed", "stemcells: [{alias: d, os: o, version: '1'}]\n---\nname: b\n", false),
		Entry("a nested stemcells key is not top-level", "name: a\nupdate:\n  stemcells: x\nstemcells:\n- {alias: d, os: o, version: '3'}\n", true),
		Entry("a quoted top-level key: whole manifest parsed", "name: a\n\"stemcells\":\n- {alias: d, os: o, version: '4'}\n", false),
		Entry("a top-level blacksmith block naming the instance",
			"name: a\nproperties:\n  other: {x: 1}\n  blacksmith:\n    plan_id: p1\n    instance_id: i1\n    organization_guid: o1\n    parameters: {size: 3}\n", true),
		Entry("a top-level block without an instance id: the instance groups' may win",
			"properties:\n  blacksmith: {plan_id: p1}\ninstance_groups:\n- name: g\n  properties:\n    blacksmith: {plan_id: p2, instance_id: i2}\n", false),
		Entry("a block under an instance group only",
			"name: a\ninstance_groups:\n- name: g\n  properties:\n    blacksmith: {plan_id: p2, instance_id: i2}\n", false),
		Entry("properties without any blacksmith block", "name: a\nproperties: {x: 1}\n", true),
		Entry("a backslash could spell a key: whole manifest parsed", "name: a\nproperties: {x: \"a\\tb\"}\n", false),
	)

	It("fails on a manifest that is not YAML", func() {
		text := "stemcells: [\n"
		_, err := RecordInfo(text, func() (*Manifest, error) { return Parse(text) })
		Expect(err).To(HaveOccurred())
	})
})
