package httpkit_test

import (
	"strings"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/httpkit"
)

var _ = Describe("texts", func() {
	DescribeTable("CodeClass",
		func(status int, want string) { Expect(httpkit.CodeClass(status)).To(Equal(want)) },
		Entry("no answer", 0, "error"),
		Entry("200", 200, "2xx"),
		Entry("302", 302, "3xx"),
		Entry("404", 404, "4xx"),
		Entry("503", 503, "5xx"),
		Entry("600", 600, "error"),
		Entry("99", 99, "error"),
	)

	Describe("DecodeJSON", func() {
		It("decodes", func() {
			var v struct{ A int }
			Expect(httpkit.DecodeJSON([]byte(`{"a":1}`), &v)).To(Succeed())
			Expect(v.A).To(Equal(1))
		})
		It("cuts the text of its error, which quotes the input", func() {
			var v struct{ A int }
			err := httpkit.DecodeJSON([]byte(`{"a":1`+strings.Repeat("0", 4096)+`e999}`), &v)
			Expect(err).To(MatchError(HavePrefix("json: cannot unmarshal number 1000")))
			Expect(len(err.Error())).To(Equal(httpkit.MaxErrorText))
			Expect(utf8.ValidString(err.Error())).To(BeTrue())
		})
	})
})
