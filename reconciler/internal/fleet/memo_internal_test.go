package fleet

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cloudfoundry-community/gogobosh"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
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

	It("is shared by the copy a fetch returns and the copy it caches, and the digest of either is the same", func(ctx SpecContext) {
		dir, err := sim.New(sim.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(dir.Close()).To(Succeed()) })
		dir.SeedDeployments(1, nil)
		client, err := bosh.New(bosh.Options{Address: dir.URL(), Username: sim.DefaultUsername, Password: sim.DefaultPassword})
		Expect(err).NotTo(HaveOccurred())
		deps, err := client.Deployments(ctx)
		Expect(err).NotTo(HaveOccurred())
		s := NewCache(time.Hour, time.Now)
		fresh, err := s.Fetch(ctx, client, deps[0], true, nil)
		Expect(err).NotTo(HaveOccurred())
		m := report.Match{InstanceID: "i"}
		fresh.Remember(m, deps[0], "digest")
		cached, err := s.Fetch(ctx, client, deps[0], true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(cached).NotTo(BeIdenticalTo(fresh))
		Expect(s.Fetches()).To(BeEquivalentTo(1))
		v, ok := cached.Memo(m, deps[0])
		Expect(ok).To(BeTrue(), "what the fetching run derived serves the next")
		Expect(v).To(Equal("digest"))
	})
})
