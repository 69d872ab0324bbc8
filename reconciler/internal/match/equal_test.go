package match_test

import (
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
)

var _ = Describe("two manifests compared", func() {
	DescribeTable("are equal when they hold the same values",
		func(a, b string, equal bool) {
			got, err := match.SameValues(a, b)
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(Equal(equal))
		},
		Entry("the same text", "name: d\n", "name: d\n", true),
		Entry("keys in another order, other layout and comments", "name: d\nproperties: {a: 1, b: [x, y]}\n",
			"# rendered\nproperties:\n  b:\n  - x\n  - y\n  a: 1\nname: d\n", true),
		Entry("a value changed", "name: d\nproperties: {a: 1}\n", "name: d\nproperties: {a: 2}\n", false),
		Entry("a number and its text", "name: d\nport: 6379\n", "name: d\nport: \"6379\"\n", false),
		Entry("a key more", "name: d\n", "name: d\nextra: true\n", false),
		Entry("an alias and what it names", "a: &x {k: v}\nb: *x\n", "a: {k: v}\nb: {k: v}\n", true),
	)
	It("refuses a manifest past the bounds, and one that is not YAML", func() {
		_, err := match.SameValues("name: d\n", strings.Repeat("[", 500))
		Expect(err).To(MatchError(match.ErrManifestBounds))
		_, err = match.SameValues("name: d\n", "name: [unclosed\n")
		Expect(err).To(HaveOccurred())
	})
})
