package catalog_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
)

var _ = Describe("CompareVersions", func() {
	It("orders by semver.org precedence", func() {
		ordered := []string{"", "not-a-version", "0.9.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
			"1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.9.0", "1.10.0", "2.0.0", "10.0.0", "99999999999999999999.0.0"}
		for i := range ordered {
			for j := range ordered {
				want := 0
				if i < j {
					want = -1
				} else if i > j {
					want = 1
				}
				Expect(catalog.CompareVersions(ordered[i], ordered[j])).To(Equal(want), "%q vs %q", ordered[i], ordered[j])
			}
		}
	})

	It("ignores build metadata", func() {
		Expect(catalog.CompareVersions("1.2.3+build.7", "1.2.3")).To(BeZero())
		Expect(catalog.CompareVersions("1.2.3-rc.1+x", "1.2.3-rc.1+y")).To(BeZero())
	})
})
