package match

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("AsksLatest", func() {
	DescribeTable("reads the releases and stemcells a manifest asks for as the newest uploaded",
		func(text string, want []Latest) {
			got, err := AsksLatest(text)
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(want))
		},
		Entry("the broker's sample plan: the release and the stemcell", `---
name: redis-small-1
releases:
- name: redis
  version: latest
stemcells:
- alias: default
  os: ubuntu-jammy
  version: latest
`, []Latest{{Name: "redis"}, {Stemcell: true, Name: "ubuntu-jammy", OS: true}}),
		Entry("pinned versions, numbers included: none", seedDirectorManifest, nil),
		Entry("a prefix, a stemcell by name, a quoted latest",
			"releases:\n- {name: redis, version: 16.latest}\n- {name: bpm, version: '1.2'}\nstemcells:\n"+
				"- {alias: d, name: bosh-warden-boshlite-ubuntu-jammy-go_agent, version: \"621.latest\"}\n",
			[]Latest{{Name: "redis", Prefix: "16"}, {Stemcell: true, Name: "bosh-warden-boshlite-ubuntu-jammy-go_agent", Prefix: "621"}}),
		Entry("the os wins over the name, as the Director looks it up first",
			"stemcells:\n- {alias: d, os: ubuntu-noble, name: other, version: latest}\n",
			[]Latest{{Stemcell: true, Name: "ubuntu-noble", OS: true}}),
		Entry("what the Director does not resolve: .latest, latest.1, a stemcell with neither os nor name",
			"releases:\n- {name: a, version: .latest}\n- {name: b, version: latest.1}\n- {name: c, version: xlatest}\n"+
				"stemcells:\n- {alias: d, version: latest}\n", nil),
		Entry("latest written with escapes, and through an anchor (the whole manifest is parsed)",
			"x: &v latest\nreleases:\n- {name: a, version: \"l\\x61test\"}\n- {name: b, version: *v}\n",
			[]Latest{{Name: "a"}, {Name: "b"}}),
		Entry("a number beside a latest", "releases:\n- {name: a, version: 16.1}\n- {name: b, version: latest}\n",
			[]Latest{{Name: "b"}}),
		Entry("latest elsewhere only (a job named so): none", "name: d\ninstance_groups:\n- name: latest\n", nil),
		Entry("no releases or stemcells, an empty document", "", nil),
	)

	It("refuses a manifest past the bounds or that is no manifest, naming what it read", func() {
		_, err := AsksLatest("releases: latest\n")
		Expect(err).To(MatchError(HavePrefix("reading latest versions: ")))
		_, err = AsksLatest("latest: " + strings.Repeat("[", maxFlowDepth+1))
		Expect(err).To(MatchError(ErrManifestBounds))
		_, err = AsksLatest("releases:\n- name: a\n  version: latest\n  version: 1\n")
		Expect(err).To(HaveOccurred(), "a key twice, as the YAML package refuses it")
	})
})
