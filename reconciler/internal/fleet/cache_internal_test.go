package fleet

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/cloudfoundry-community/gogobosh"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("the cache of fetched answers", func() {
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

	fetchAll := func(s *Cache) {
		GinkgoHelper()
		for _, d := range deps {
			_, err := s.Fetch(ctx, client, d, false, nil)
			Expect(err).NotTo(HaveOccurred())
		}
	}

	It("fetches again only a deployment whose listing entry changed, and drops those no longer listed", func() {
		s := NewCache(time.Hour, time.Now)
		fetchAll(s)
		fetchAll(s)
		Expect(s.Fetches()).To(BeEquivalentTo(3))

		changed := deps[0]
		changed.Releases = append(changed.Releases[:0:0], changed.Releases...)
		changed.Releases[0].Version += ".1"
		_, err := s.Fetch(ctx, client, changed, false, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Fetches()).To(BeEquivalentTo(4))

		s.Purge(deps[1:])
		Expect(s.cache.ItemCount()).To(Equal(2))
		s.Clear()
		Expect(s.cache.ItemCount()).To(BeZero())
	})

	It("says once that the Director answered, before it compresses the answer for the cache", func() {
		s := NewCache(time.Hour, time.Now)
		calls, cachedThen := 0, -1
		answered := func() { calls++; cachedThen = s.cache.ItemCount() }
		f, err := s.FetchThen(ctx, client, deps[0], true, nil, answered)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.HasManifest()).To(BeTrue())
		Expect(calls).To(Equal(1))
		Expect(cachedThen).To(BeZero(), "answered before the answer was kept")
		Expect(s.cache.ItemCount()).To(Equal(1))

		calls = 0
		_, err = s.FetchThen(ctx, client, deps[0], true, nil, answered) // the cached copy: nothing asked
		Expect(err).NotTo(HaveOccurred())
		Expect(calls).To(Equal(1))

		calls = 0
		gone := deps[1]
		gone.Name = "gone"
		_, err = s.FetchThen(ctx, client, gone, true, nil, answered)
		Expect(err).To(MatchError(bosh.ErrDeploymentNotFound))
		Expect(calls).To(Equal(1))
	})

	It("keeps the manifest compressed between runs and gives back the text it fetched", func() {
		s := NewCache(time.Hour, time.Now)
		fresh, err := s.Fetch(ctx, client, deps[0], true, nil)
		Expect(err).NotTo(HaveOccurred())
		text, err := client.Manifest(ctx, deps[0].Name)
		Expect(err).NotTo(HaveOccurred())
		Expect(fresh.Manifest()).To(Equal(text))
		sum := sha256.Sum256([]byte(text))
		Expect(fresh.ManifestSHA()).To(Equal(hex.EncodeToString(sum[:])))

		cached, err := s.Fetch(ctx, client, deps[0], true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Fetches()).To(BeEquivalentTo(1))
		Expect(cached.text).To(BeEmpty(), "the cached copy holds no text")
		Expect(len(cached.zipped.data)).To(BeNumerically(">", 0))
		Expect(len(cached.zipped.data)).To(BeNumerically("<", len(text)))
		Expect(cached.HasManifest()).To(BeTrue())
		Expect(cached.Manifest()).To(Equal(text))
		Expect(cached.ManifestSHA()).To(Equal(fresh.ManifestSHA()))
		Expect(cached.vms).To(BeNil(), "the cached copy keeps its VMs packed")
		want := fresh.VMs()
		Expect(want).NotTo(BeEmpty())
		Expect(want[0].AgentID).NotTo(BeEmpty())
		var trimmed []bosh.VM
		for _, v := range want {
			trimmed = append(trimmed, bosh.VM{ID: v.ID, Job: v.Job, Index: v.Index, AZ: v.AZ, IPs: v.IPs})
		}
		Expect(cached.VMs()).To(Equal(trimmed), "what records take of them: id, job, index, AZ, IPs")
		info, err := cached.Info()
		Expect(err).NotTo(HaveOccurred())
		Expect(info).NotTo(BeNil())
	})

	It("reads what a manifest asks as latest once, from the text or the compressed copy", func() {
		asks := "name: x\nreleases:\n- name: redis\n  version: latest\nstemcells:\n- alias: default\n  os: ubuntu-jammy\n  version: \"1.5\"\n"
		for _, f := range []*Fetched{FetchedOf(asks, nil), FetchedOf(asks, nil).kept(nil)} {
			got, err := f.AsksLatest()
			Expect(err).NotTo(HaveOccurred())
			Expect(got).To(HaveLen(1))
			Expect(got[0].Name).To(Equal("redis"))
		}
		none, err := FetchedOf("name: x\nreleases:\n- name: redis\n  version: \"1.2\"\n", nil).kept(nil).AsksLatest()
		Expect(err).NotTo(HaveOccurred())
		Expect(none).To(BeEmpty())
	})

	It("gives a cached copy its parse only when a run needs it, then parses it once", func() {
		k := FetchedOf("name: x\nreleases:\n- name: redis\n  version: \"1.2\"\n", nil).kept(nil)
		Expect(k.parse).To(BeNil())
		asks, err := k.AsksLatest()
		Expect(err).NotTo(HaveOccurred())
		Expect(asks).To(BeEmpty())
		Expect(k.memo.parse.Load()).To(BeNil(), "a manifest that cannot ask for latest needs none")
		first, err := k.Info()
		Expect(err).NotTo(HaveOccurred())
		Expect(k.memo.parse.Load()).NotTo(BeNil())
		again, err := k.Info()
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(BeIdenticalTo(first), "parsed once")
	})

	It("parses a manifest once for the fetch's copy, its cached copy and the copy fetched again for its VMs", func() {
		s := NewCache(time.Hour, time.Now)
		first, err := s.Fetch(ctx, client, deps[0], false, nil)
		Expect(err).NotTo(HaveOccurred())
		info, err := first.Info()
		Expect(err).NotTo(HaveOccurred())
		withVMs, err := s.Fetch(ctx, client, deps[0], true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Fetches()).To(BeEquivalentTo(1), "the manifest is not fetched again")
		again, err := withVMs.Info()
		Expect(err).NotTo(HaveOccurred())
		Expect(again).To(BeIdenticalTo(info))
		cached, err := s.Fetch(ctx, client, deps[0], true, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(cached).NotTo(BeIdenticalTo(withVMs))
		kept, err := cached.Info()
		Expect(err).NotTo(HaveOccurred())
		Expect(kept).To(BeIdenticalTo(info), "the next run does not parse it again")
	})

	It("purges expired entries", func() {
		s := NewCache(50*time.Millisecond, time.Now)
		fetchAll(s)
		Expect(s.cache.ItemCount()).To(Equal(3))
		Eventually(func() int { s.Purge(deps); return s.cache.ItemCount() }).Should(BeZero())
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

var _ = Describe("the VMs of a cached copy", func() {
	It("are what records take of the answer, none and empty lists kept apart", func() {
		vms := []bosh.VM{
			{AgentID: "agent-1", CID: "vm-cid", Job: "redis", Index: 1, ID: "id-1", AZ: "z1", IPs: []string{"10.0.0.2", "10.0.0.3"}, VMCreatedAt: 1, Active: true},
			{Job: "é<job>", ID: "id-0", IPs: []string{}},
			{Job: "x", ID: "id-2"},
		}
		got := FetchedOf("name: x", vms).kept(nil).VMs()
		Expect(got).To(Equal([]bosh.VM{
			{Job: "redis", Index: 1, ID: "id-1", AZ: "z1", IPs: []string{"10.0.0.2", "10.0.0.3"}},
			{Job: "é<job>", ID: "id-0", IPs: []string{}},
			{Job: "x", ID: "id-2"},
		}))
		Expect(FetchedOf("name: x", []bosh.VM{}).kept(nil).VMs()).To(Equal([]bosh.VM{}))
		Expect(FetchedOf("name: x", nil).kept(nil).VMs()).To(BeNil())
	})
})
