package textcut_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

var _ = Describe("cutting a text", func() {
	DescribeTable("Prefix keeps the start within the bound, at a character's start",
		func(s string, n int, want string) {
			got := textcut.Prefix(s, n)
			Expect(got).To(Equal(want))
			Expect(textcut.Prefix(got, n)).To(Equal(got), "a cut text is kept")
		},
		Entry("short", "abc", 10, "abc"),
		Entry("at the bound", "abcdefghij", 10, "abcdefghij"),
		Entry("over the bound", "abcdefghijk", 10, "abcdefghij"),
		Entry("a two-byte character across the cut", "abcdefghi\u00e9k", 10, "abcdefghi"),
		Entry("a three-byte character across the cut", "abcdefgh\u20ack", 10, "abcdefgh"),
		Entry("a four-byte character across the cut", "abcdefg\U0001F600k", 10, "abcdefg"),
		Entry("a character ending at the bound", "abcdefg\u20ack", 10, "abcdefg\u20ac"),
		Entry("only a character longer than the bound", "\U0001F600", 3, ""),
		Entry("a bound of 0", "abc", 0, ""),
		Entry("a bound below 0", "abc", -1, ""),
		Entry("empty", "", 0, ""),
	)

	DescribeTable(`Marked keeps the start and the marker within the bound`,
		func(s string, n int, marker, want string) {
			got := textcut.Marked(s, n, marker)
			Expect(got).To(Equal(want))
			Expect(len(got)).To(BeNumerically("<=", max(n, 0)))
			Expect(textcut.Marked(got, n, marker)).To(Equal(got), "a cut text is kept")
		},
		Entry("short", "abc", 10, "...", "abc"),
		Entry("at the bound", "abcdefghij", 10, "...", "abcdefghij"),
		Entry("over the bound", "abcdefghijk", 10, "...", "abcdefg..."),
		Entry("a character across the cut", "abcdef\u00e9ghijk", 10, "...", "abcdef..."),
		Entry("a three-byte character across the cut", "abcde\u20acghijk", 10, "...", "abcde..."),
		Entry("a marker of one character of three bytes", "abcdefghijk", 10, "…", "abcdefg…"),
		Entry("room for the marker only", "abcdef", 3, "...", "..."),
		Entry("no room for the marker", "abcdef", 2, "...", "ab"),
		Entry("no marker", "abcdefghijk", 10, "", "abcdefghij"),
	)
})
