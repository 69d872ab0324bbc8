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

var _ = Describe("a plan's version against the versions instances record", func() {
	cat := &catalog.Catalog{Services: []catalog.Service{{ID: "redis", Plans: []catalog.Plan{
		{ID: "small", MaintenanceInfo: &catalog.MaintenanceInfo{Version: "1.2.0"}, Source: "/cat/redis/small/plan.yml"},
		{ID: "large", MaintenanceInfo: &catalog.MaintenanceInfo{Version: "2.0.0"}},
	}}}}
	records := func(rs ...[3]string) func(func(id, plan, version string) bool) {
		return func(yield func(id, plan, version string) bool) {
			for _, r := range rs {
				if !yield(r[0], r[1], r[2]) {
					return
				}
			}
		}
	}

	It("finds nothing when every recorded version is at most the plan's", func() {
		Expect(catalog.VersionProblems(cat, records(
			[3]string{"a", "small", "1.2.0"}, [3]string{"b", "small", "1.1.9"}, [3]string{"c", "small", ""},
			[3]string{"d", "large", "2.0.0-rc.1"}, [3]string{"e", "gone", "9.0.0"}))).To(BeEmpty())
	})

	It("names the plan's file, the highest version recorded and the first instances recording it", func() {
		problems := catalog.VersionProblems(cat, records(
			[3]string{"a", "small", "1.3.0"}, [3]string{"b", "small", "2.0.0"}, [3]string{"c", "small", "2.0.0"},
			[3]string{"d", "large", "2.0.1"}))
		Expect(problems).To(HaveLen(2))
		Expect(problems[0].String()).To(Equal("/cat/redis/small/plan.yml: maintenance_info.version: 1.2.0 is lower than 2.0.0, " +
			"which instance(s) b, c record (3 instance(s) record a higher version): a plan's version never goes down"))
		Expect(problems[1].File).To(Equal("plan large"), "a plan made in code")
	})
})
