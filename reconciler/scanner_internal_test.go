package reconciler

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cloudfoundry-community/gogobosh"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("the scanner's cache", func() {
	var (
		client *bosh.Client
		deps   []bosh.Deployment
		ctx    = context.Background()
	)
	BeforeEach(func() {
		d, err := sim.New(sim.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(d.Close()).To(Succeed()) })
		d.SeedDeployments(3, nil)
		client, err = bosh.New(bosh.Options{Address: d.URL(), Username: sim.DefaultUsername, Password: sim.DefaultPassword})
		Expect(err).NotTo(HaveOccurred())
		deps, err = client.Deployments(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(deps).To(HaveLen(3))
	})

	fetchAll := func(s *scanner) {
		GinkgoHelper()
		for _, d := range deps {
			_, err := s.fetch(ctx, client, d, false, nil)
			Expect(err).NotTo(HaveOccurred())
		}
	}

	It("fetches again only a deployment whose listing entry changed, and drops those no longer listed", func() {
		s := newScanner(time.Hour, time.Now)
		fetchAll(s)
		fetchAll(s)
		Expect(s.fetches.Load()).To(BeEquivalentTo(3))

		changed := deps[0]
		changed.Releases = append(changed.Releases[:0:0], changed.Releases...)
		changed.Releases[0].Version += ".1"
		_, err := s.fetch(ctx, client, changed, false, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(s.fetches.Load()).To(BeEquivalentTo(4))

		s.purge(deps[1:])
		Expect(s.cache.ItemCount()).To(Equal(2))
		s.clear()
		Expect(s.cache.ItemCount()).To(BeZero())
	})

	It("purges expired entries", func() {
		s := newScanner(50*time.Millisecond, time.Now)
		fetchAll(s)
		Expect(s.cache.ItemCount()).To(Equal(3))
		Eventually(func() int { s.purge(deps); return s.cache.ItemCount() }).Should(BeZero())
	})
})

var _ = Describe("the listing key", func() {
	It("holds what the listing returns (releases, lock) and not the stemcells it is asked without", func() {
		d := bosh.Deployment{Name: "d", Releases: []gogobosh.Resource{{Name: "redis", Version: "1"}}}
		withStemcell := d
		withStemcell.Stemcells = []gogobosh.Resource{{Name: "ubuntu-jammy", Version: "1.1"}}
		Expect(listingKey(withStemcell)).To(Equal(listingKey(d)))
		locked, newer := d, d
		locked.Locked = true
		newer.Releases = []gogobosh.Resource{{Name: "redis", Version: "2"}}
		Expect(listingKey(locked)).NotTo(Equal(listingKey(d)))
		Expect(listingKey(newer)).NotTo(Equal(listingKey(d)))
	})
})
