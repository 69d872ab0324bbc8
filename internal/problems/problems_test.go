package problems_test

import (
	"errors"
	"io/fs"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/problems"
)

type problem struct {
	line string
	err  error
}

func (p problem) String() string { return p.line }
func (p problem) Unwrap() error  { return p.err }

var _ = Describe("a list of problems", func() {
	DescribeTable("Error puts each problem on its own line, in order",
		func(list []problem, want string) {
			Expect((&problems.List[problem]{List: list}).Error()).To(Equal(want))
		},
		Entry("none", nil, ""),
		Entry("one", []problem{{line: "a: bad"}}, "a: bad"),
		Entry("several", []problem{{line: "b: bad"}, {line: "a: worse"}}, "b: bad\na: worse"),
	)

	It("unwraps to the underlying errors, so errors.Is sees each of them", func() {
		other := errors.New("other")
		var err error = &problems.List[problem]{List: []problem{
			{line: "a: missing", err: fs.ErrNotExist}, {line: "b: bad"}, {line: "c: other", err: other},
		}}
		Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue())
		Expect(errors.Is(err, other)).To(BeTrue())
		Expect(errors.Is(err, fs.ErrPermission)).To(BeFalse())
	})
})
