package cf_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf"
)

var _ = Describe("options", func() {
	valid := func() cf.Options {
		return cf.Options{API: "https://api.example.com", ClientID: "id", ClientSecret: "secret"}
	}
	It("accepts valid options without any I/O", func() {
		_, err := cf.New(valid())
		Expect(err).NotTo(HaveOccurred())
	})
	DescribeTable("refuses", func(edit func(*cf.Options), want string) {
		o := valid()
		edit(&o)
		_, err := cf.New(o)
		Expect(err).To(MatchError(ContainSubstring(want)))
	},
		Entry("no API", func(o *cf.Options) { o.API = "" }, "api is required"),
		Entry("another scheme", func(o *cf.Options) { o.API = "ftp://x" }, "want https://"),
		Entry("a path", func(o *cf.Options) { o.API = "https://x/v3" }, "no path"),
		Entry("no secret", func(o *cf.Options) { o.ClientSecret = "" }, "client id and secret"),
		Entry("per page over 5000", func(o *cf.Options) { o.PerPage = 5001 }, "per page"),
		Entry("a negative timeout", func(o *cf.Options) { o.Timeout = -1 }, "must not be negative"),
		Entry("a CA that is not PEM", func(o *cf.Options) { o.CACert = "junk" }, "no PEM certificate"),
	)
})
