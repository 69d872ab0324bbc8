package reconciler

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("reading stemcells from a manifest", func() {
	DescribeTable("gives what parsing the whole manifest gives",
		func(text string, cut bool) {
			_, ok := stemcellsBlock(text)
			Expect(ok).To(Equal(cut), "whether the block can be cut out")
			got, err := stemcellsOf(text, func() (*manifestInfo, error) { return parseManifest(text) })
			Expect(err).NotTo(HaveOccurred())
			full, err := parseManifest(text)
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(full.Stemcells))
		},
		Entry("block style between other keys", "---\nname: a\nstemcells:\n- alias: default\n  os: ubuntu-jammy\n  version: \"1.506\"\n# note\n\ninstance_groups:\n- name: x\n  stemcell: default\n", true),
		Entry("indented sequence, last key", "name: a\nreleases: []\nstemcells:\n  - alias: default\n    os: ubuntu-noble\n    version: latest\n", true),
		Entry("flow style on one line", "stemcells: [{alias: d, name: bosh-warden-boshlite-ubuntu-jammy-go_agent, version: '1.1'}]\nname: a\n", true),
		Entry("none at all", "name: a\n", true),
		Entry("an anchor: whole manifest parsed", "x: &v '2'\nstemcells:\n- {alias: d, os: o, version: *v}\n", false),
		Entry("two documents: whole manifest parsed", "stemcells: [{alias: d, os: o, version: '1'}]\n---\nname: b\n", false),
		Entry("a nested stemcells key is not top-level", "name: a\nupdate:\n  stemcells: x\nstemcells:\n- {alias: d, os: o, version: '3'}\n", true),
	)

	It("fails on a manifest that is not YAML", func() {
		text := "stemcells: [\n"
		_, err := stemcellsOf(text, func() (*manifestInfo, error) { return parseManifest(text) })
		Expect(err).To(HaveOccurred())
	})
})
