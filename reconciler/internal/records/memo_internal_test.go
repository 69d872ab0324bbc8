package records

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// A steady run digests every deployment's records: the digest made from a
// cached copy is kept with it, for the same match and listing entry.
var _ = Describe("the fingerprint kept with a cached copy", func() {
	var (
		ctx      = context.Background()
		d        bosh.Deployment
		fetched  *fleet.Fetched // the copy a fetch returns: it shares the cached copy's memo
		cached   *fleet.Fetched // the copy the cache keeps
		m, other report.Match
	)
	BeforeEach(func() {
		director, err := sim.New(sim.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(director.Close()).To(Succeed()) })
		director.SeedDeployments(1, nil)
		client, err := bosh.New(bosh.Options{Address: director.URL(), Username: sim.DefaultUsername, Password: sim.DefaultPassword})
		Expect(err).NotTo(HaveOccurred())
		deps, err := client.Deployments(ctx)
		Expect(err).NotTo(HaveOccurred())
		d = deps[0]
		cache := fleet.NewCache(time.Hour, time.Now)
		fetched, err = cache.Fetch(ctx, client, d, true, nil)
		Expect(err).NotTo(HaveOccurred())
		cached, err = cache.Fetch(ctx, client, d, true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(cached).NotTo(BeIdenticalTo(fetched))
		Expect(fetched.VMs()).NotTo(BeEmpty())
		m = report.Match{InstanceID: "i-1", ServiceID: "redis", PlanID: "small", Strategy: report.StrategyName, Confidence: 1}
		other = m
		other.PlanID = "large"
	})

	It("is the digest, kept for the same match and listing entry, made again for any other", func() {
		alone := fleet.FetchedOf(fetched.Manifest(), fetched.VMs()) // no memo: digested at each call
		want := New(d, fetched, m).Fingerprint
		Expect(New(d, alone, m).Fingerprint).To(Equal(want))
		got, ok := cached.Memo(m, d)
		Expect(ok).To(BeTrue(), "the fetch's copy remembers with the cached one")
		Expect(got).To(Equal(want))

		cached.Remember(m, d, "kept") // so that taking it shows
		Expect(New(d, cached, m).Fingerprint).To(Equal("kept"))
		Expect(New(d, fetched, m).Fingerprint).To(Equal("kept"), "one memo for both copies")
		Expect(New(d, cached, other).Fingerprint).To(Equal(New(d, alone, other).Fingerprint),
			"made again from the cached copy (its VMs packed) for another match: the same digest")
		moved := d
		moved.Director = "director-2"
		Expect(New(moved, cached, other).Fingerprint).To(Equal(New(moved, alone, other).Fingerprint))
		bumped := d
		bumped.Releases = append(d.Releases[:0:0], d.Releases...)
		bumped.Releases[0].Version += ".1"
		Expect(New(bumped, cached, other).Fingerprint).To(Equal(New(bumped, alone, other).Fingerprint))
		Expect(New(bumped, alone, other).Fingerprint).NotTo(Equal(New(d, alone, other).Fingerprint))
	})

	It("leaves the records' releases and VMs to Load, from the listing and the copy", func() {
		t, err := New(d, cached, m).Load(nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(t.releases).To(Equal(releasesOf(d.Releases)))
		Expect(t.vms).To(HaveLen(len(cached.VMs())))
		Expect(t.vms).To(Equal(vmsOf(fetched.VMs())))
	})
})
