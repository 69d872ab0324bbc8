package versions_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/versions"
)

var _ = Describe("BOSH versions", func() {
	DescribeTable("Compare orders them as the Director resolves latest",
		func(a, b string, want int) {
			Expect(versions.Compare(a, b)).To(Equal(want), "%s vs %s", a, b)
			Expect(versions.Compare(b, a)).To(Equal(-want), "%s vs %s", b, a)
		},
		Entry("dotted numbers numerically", "16.10.0", "16.9.0", 1),
		Entry("a stemcell's two parts", "1.506", "1.80", 1),
		Entry("a number longer than int64", "1.99999999999999999999999", "1.99999999999999999999998", 1),
		Entry("leading zeros", "1.010", "1.10", 0),
		Entry("missing trailing parts count as 0", "1.0", "1", 0),
		Entry("but not a trailing part above 0", "1.0.1", "1", 1),
		Entry("a pre-release before its release", "1.0.0-dev.3", "1.0.0", -1),
		Entry("pre-releases among themselves", "1.0.0-dev.10", "1.0.0-dev.9", 1),
		Entry("a pre-release of a higher release", "1.1.0-rc.1", "1.0.9", 1),
		Entry("a post-release after its release (BOSH dev builds)", "1+dev.2", "1", 1),
		Entry("post-releases among themselves", "1+dev.10", "1+dev.9", 1),
		Entry("a number before a word", "1.0.1", "1.0.a", -1),
		Entry("words as text", "1.0.beta", "1.0.alpha", 1),
		Entry("equal", "3586.100", "3586.100", 0),
		Entry("an invalid version before every valid one", "1..2", "0.1", -1),
		Entry("two invalid ones as text", "b!", "a!", 1),
		Entry("empty is invalid", "", "0", -1),
	)

	DescribeTable("HasPrefix picks what PREFIX.latest may resolve to, as the Director does",
		func(version, prefix string, want bool) {
			Expect(versions.HasPrefix(version, prefix)).To(Equal(want))
		},
		Entry("no prefix: every version", "1.506", "", true),
		Entry("the prefix and a dot", "621.125", "621", true),
		Entry("the prefix itself", "621", "621", true),
		Entry("the prefix and a pre-release", "16-rc.1", "16", true),
		Entry("the prefix and a post-release", "16+dev.1", "16", true),
		Entry("a longer number", "6210.1", "621", false),
		Entry("another version", "1.506", "621", false),
	)
})
