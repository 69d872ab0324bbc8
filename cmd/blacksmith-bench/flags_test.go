package main

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = DescribeTable("-memory-limit reads a size as GOMEMLIMIT does",
	func(v string, want int64, ok bool) {
		got, err := parseMemoryLimit(v)
		if !ok {
			Expect(err).To(MatchError(ContainSubstring(v)))
			return
		}
		Expect(err).NotTo(HaveOccurred())
		Expect(got).To(Equal(want))
	},
	Entry("MiB", "450MiB", int64(450<<20), true),
	Entry("GiB", "2GiB", int64(2<<30), true),
	Entry("bytes", "1000", int64(1000), true),
	Entry("B", "1000B", int64(1000), true),
	Entry("a decimal unit", "450MB", int64(0), false),
	Entry("zero", "0", int64(0), false),
	Entry("negative", "-1MiB", int64(0), false),
	Entry("too large", "9000000TiB", int64(0), false),
	Entry("no number", "MiB", int64(0), false),
)
