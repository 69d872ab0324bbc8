package bosh

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the uploads listings", func() {
	It("decodes releases.json and stemcells.json, the Director's answers", func() {
		var releases []Release
		Expect(decodeJSON(fixture("releases.json"), &releases)).To(Succeed())
		Expect(releases).To(Equal([]Release{{Name: "redis", Versions: []ReleaseVersion{
			{Version: "16.0.0", CommitHash: "4c36884a", JobNames: []string{"redis", "smoke-tests"}},
			{Version: "16.1.0", CommitHash: "e5416248", CurrentlyDeployed: true, JobNames: []string{"redis", "smoke-tests"}},
		}}}))

		var stemcells []Stemcell
		Expect(decodeJSON(fixture("stemcells.json"), &stemcells)).To(Succeed())
		Expect(stemcells).To(Equal([]Stemcell{{
			Name: "bosh-vsphere-esxi-ubuntu-jammy-go_agent", OperatingSystem: "ubuntu-jammy", Version: "1.506",
			CID:         "sc-c3705a0d-0dd3-4b67-52b5-50533a432244",
			Deployments: []StemcellUser{{Name: "cf"}, {Name: "service-instance_5b1b7f3e-6c1d-4b1e-9d0a-2f3c4e5d6a7b"}},
			APIVersion:  3, ID: 12,
		}}))
	})

	It("reads a stemcell without an API version (null, as older Directors keep it)", func() {
		var stemcells []Stemcell
		Expect(decodeJSON([]byte(`[{"name":"s","version":"3586.100","api_version":null,"deployments":[]}]`), &stemcells)).To(Succeed())
		Expect(stemcells).To(Equal([]Stemcell{{Name: "s", Version: "3586.100", Deployments: []StemcellUser{}}}))
	})

	It("seeds FuzzDecodeUploads with releases.json and stemcells.json byte for byte", func() {
		Expect(seedReleases).To(Equal(string(fixture("releases.json"))))
		Expect(seedStemcells).To(Equal(string(fixture("stemcells.json"))))
	})
})
