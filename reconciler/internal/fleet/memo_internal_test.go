package fleet

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cloudfoundry-community/gogobosh"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
)

var _ = Describe("a memo's key", func() {
	It("tells apart inputs that only split the same bytes otherwise, and is the same for the same inputs", func() {
		m := report.Match{InstanceID: "ab", ServiceID: "", PlanID: "p", Strategy: report.StrategyName, Confidence: 1}
		d := bosh.Deployment{Name: "p-ab", Releases: []gogobosh.Resource{{Name: "redis", Version: "1"}}}
		key := memoKey(m, d)
		Expect(memoKey(m, d)).To(Equal(key))

		split := m
		split.InstanceID, split.ServiceID = "a", "b"
		two := d
		two.Releases = []gogobosh.Resource{{Name: "redis1", Version: ""}}
		director := d
		director.Director = "d2"
		confidence := m
		confidence.Confidence = 0.9
		for _, other := range [][2]uint64{memoKey(split, d), memoKey(m, two), memoKey(m, director), memoKey(confidence, d)} {
			Expect(other).NotTo(Equal(key))
		}
	})

	It("is kept only with a cached copy", func() {
		f := FetchedOf("name: x", nil)
		m, d := report.Match{InstanceID: "x"}, bosh.Deployment{Name: "x"}
		f.Remember(m, d, "v")
		_, ok := f.Memo(m, d)
		Expect(ok).To(BeFalse())
		k := f.kept(nil)
		k.Remember(m, d, "v")
		v, ok := k.Memo(m, d)
		Expect(ok).To(BeTrue())
		Expect(v).To(Equal("v"))
		_, ok = k.Memo(report.Match{InstanceID: "y"}, d)
		Expect(ok).To(BeFalse())
	})
})
