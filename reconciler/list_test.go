package reconciler_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// listedRecords is how many index records the list spec writes: 100,000
// take over a minute to write to a dev Vault, so they are
// BenchmarkListInstances's.
const listedRecords = 20_000

// fleetRecord is the record seedIndex writes for the i-th instance: plans,
// Directors and states spread over the fleet.
func fleetRecord(i int) *vault.Record {
	plans := []string{"redis-small", "redis-large", "postgresql-small"}
	r := &vault.Record{ServiceID: "redis", PlanID: plans[i%3], OrganizationGUID: fmt.Sprintf("org-%03d", i%100),
		SpaceGUID: fmt.Sprintf("space-%04d", i%1000), Context: map[string]string{"organization_name": fmt.Sprintf("Team%03d", i%100)}}
	if i%4 == 0 {
		r.Director = "east"
	}
	switch i % 10 {
	case 1:
		r.Orphaned, r.OrphanedAt = true, "2026-11-01T00:00:00Z"
	case 2:
		r.LastOperation = &vault.Operation{Type: "update", State: vault.OperationInProgress}
	case 3:
		r.LastOperation = &vault.Operation{Type: "provision", State: vault.OperationFailed}
	case 4:
		r.Adopted = true
	default:
		r.LastOperation = &vault.Operation{Type: "provision", State: vault.OperationSucceeded}
	}
	return r
}

// fleetID is the i-th instance's id.
func fleetID(i int) string { return fmt.Sprintf("inst-%06d", i) }

// seedIndex writes n fleet records through the store, 2,000 at a time, 8
// batches at once.
func seedIndex(ctx context.Context, store *vault.Store, n int) error {
	const batch, parallel = 2000, 8
	sem := make(chan struct{}, parallel)
	errs := make(chan error, n/batch+1)
	var wg sync.WaitGroup
	for start := 0; start < n; start += batch {
		changes := map[string]vault.Change{}
		for i := start; i < min(start+batch, n); i++ {
			rec := fleetRecord(i)
			changes[fleetID(i)] = func(*vault.Record) (*vault.Record, error) { return rec, nil }
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := store.Update(ctx, changes); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

var _ = Describe("the instance list", Ordered, func() {
	var (
		e     *env
		clock time.Time
		m     *reconciler.Manager
		ctx   = context.Background()
	)

	BeforeAll(func() {
		e = newEnv(envOptions{})
		clock = time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
		m = e.newManagerWith(func(o *reconciler.Options) { o.Now = func() time.Time { return clock } })
		start := time.Now()
		Expect(seedIndex(ctx, e.store, listedRecords)).To(Succeed())
		fmt.Fprintf(GinkgoWriter, "LIST wrote %d index records in %s\n", listedRecords, time.Since(start))
	})

	list := func(q reconciler.InstanceQuery) reconciler.InstancePage {
		GinkgoHelper()
		p, err := m.Views().List(ctx, q)
		Expect(err).NotTo(HaveOccurred())
		return p
	}

	It("pages through every instance once, in id order, reading the index once", func() {
		start := time.Now()
		first := list(reconciler.InstanceQuery{})
		fmt.Fprintf(GinkgoWriter, "LIST one page reading the index (%d records): %s\n", listedRecords, time.Since(start))
		Expect(first.Total).To(Equal(listedRecords))
		Expect(first.Instances).To(HaveLen(reconciler.DefaultListLimit))
		Expect(first.Next).To(Equal(fleetID(reconciler.DefaultListLimit - 1)))
		Expect(first.Plans).To(Equal([]string{"postgresql-small", "redis-large", "redis-small"}))
		Expect(first.Directors).To(Equal([]string{"default", "east"}))

		start = time.Now()
		again := list(reconciler.InstanceQuery{After: first.Next})
		fmt.Fprintf(GinkgoWriter, "LIST one page from the cache (%d records): %s\n", listedRecords, time.Since(start))
		Expect(again.ReadAt).To(Equal(first.ReadAt))

		seen := map[string]int{}
		after, pages := "", 0
		for {
			p := list(reconciler.InstanceQuery{Limit: reconciler.MaxListLimit, After: after})
			pages++
			for _, in := range p.Instances {
				Expect(in.InstanceID > after).To(BeTrue(), "in id order")
				after = in.InstanceID
				seen[in.InstanceID]++
			}
			if p.Next == "" {
				break
			}
			Expect(p.Next).To(Equal(after))
		}
		Expect(pages).To(Equal(listedRecords / reconciler.MaxListLimit))
		Expect(seen).To(HaveLen(listedRecords))
		for id, n := range seen {
			Expect(n).To(Equal(1), id)
		}
	})

	It("shows what the record says of each instance", func() {
		p := list(reconciler.InstanceQuery{Limit: 5})
		Expect(p.Instances[0]).To(Equal(reconciler.InstanceSummary{InstanceID: fleetID(0), Deployment: "redis-small-" + fleetID(0),
			ServiceID: "redis", PlanID: "redis-small", Director: "east", OrganizationGUID: "org-000", SpaceGUID: "space-0000",
			State: reconciler.StateOK, LastOperation: "provision", LastOperationState: "succeeded"}))
		Expect(p.Instances[1]).To(HaveField("Director", "default"), "a record naming no Director lives on the first")
		Expect(p.Instances[1]).To(HaveField("State", reconciler.StateOrphaned))
		Expect(p.Instances[1]).To(HaveField("OrphanedAt", "2026-11-01T00:00:00Z"))
		Expect(p.Instances[2]).To(HaveField("State", reconciler.StateInProgress))
		Expect(p.Instances[3]).To(HaveField("State", reconciler.StateFailed))
		Expect(p.Instances[4]).To(HaveField("State", reconciler.StateAdopted))
	})

	DescribeTable("searches and filters",
		func(q reconciler.InstanceQuery, total int, first string) {
			q.Limit = 1
			p := list(q)
			Expect(p.Total).To(Equal(total))
			if total == 0 {
				Expect(p.Instances).To(BeEmpty())
				Expect(p.Next).To(BeEmpty())
				return
			}
			Expect(p.Instances[0].InstanceID).To(Equal(first))
		},
		Entry("by instance id", reconciler.InstanceQuery{Search: "INST-01234"}, 10, fleetID(12340)),
		Entry("by deployment", reconciler.InstanceQuery{Search: "large-inst-00000"}, 3, fleetID(1)),
		Entry("by organization guid", reconciler.InstanceQuery{Search: "org-042"}, listedRecords/100, fleetID(42)),
		Entry("by space guid", reconciler.InstanceQuery{Search: "space-0999"}, listedRecords/1000, fleetID(999)),
		Entry("by organization name", reconciler.InstanceQuery{Search: "team042"}, listedRecords/100, fleetID(42)),
		Entry("by state", reconciler.InstanceQuery{State: reconciler.StateFailed}, listedRecords/10, fleetID(3)),
		Entry("ok", reconciler.InstanceQuery{State: reconciler.StateOK}, listedRecords*6/10, fleetID(0)),
		Entry("by plan", reconciler.InstanceQuery{Plan: "postgresql-small"}, listedRecords/3, fleetID(2)),
		Entry("by Director", reconciler.InstanceQuery{Director: "east"}, listedRecords/4, fleetID(0)),
		Entry("the first Director", reconciler.InstanceQuery{Director: "default"}, listedRecords*3/4, fleetID(1)),
		Entry("all at once", reconciler.InstanceQuery{Search: "org-00", State: reconciler.StateOrphaned, Plan: "redis-large", Director: "default"},
			listedRecords/100/3+1, fleetID(1)),
		Entry("nothing", reconciler.InstanceQuery{Search: "no-such"}, 0, ""),
	)

	It("reads the index again once the last read is a few seconds old", func() {
		before := list(reconciler.InstanceQuery{}).Total
		Expect(seedIndexOne(ctx, e.store, "zz-late")).To(Succeed())
		Expect(list(reconciler.InstanceQuery{Search: "zz-late"}).Total).To(BeZero(), "the read of a moment ago serves")
		clock = clock.Add(5 * time.Second)
		Expect(list(reconciler.InstanceQuery{Search: "zz-late"}).Total).To(Equal(1))
		Expect(list(reconciler.InstanceQuery{}).Total).To(Equal(before + 1))
	})

	It("refuses a query out of bounds", func() {
		for _, q := range []reconciler.InstanceQuery{{Limit: reconciler.MaxListLimit + 1}, {Limit: -1}, {State: "asleep"}} {
			_, err := m.Views().List(ctx, q)
			Expect(err).To(MatchError(reconciler.ErrBadQuery))
		}
	})
})

// seedIndexOne writes one record for id.
func seedIndexOne(ctx context.Context, store *vault.Store, id string) error {
	_, err := store.Update(ctx, map[string]vault.Change{id: func(*vault.Record) (*vault.Record, error) {
		return &vault.Record{ServiceID: "redis", PlanID: "redis-small"}, nil
	}})
	return err
}

// BenchmarkListInstances measures the list over 100,000 index records in a
// real Vault: one page that reads the index, and one from the last read.
// `make bench` does not run it: go test -run '^$' -bench BenchmarkListInstances -benchtime 20x ./reconciler/
func BenchmarkListInstances(b *testing.B) {
	const n = 100_000
	srv, err := testvault.Start(testvault.Options{})
	if err != nil {
		b.Skip("no Vault: " + err.Error())
	}
	defer srv.Stop()
	Expect := NewWithT(b).Expect
	Expect(srv.EnableKV("bench", 2)).To(Succeed())
	ctx := context.Background()
	store, err := vault.New(ctx, vault.Options{Address: srv.Addr, Token: srv.Token, Mount: "bench"})
	Expect(err).NotTo(HaveOccurred())
	defer store.Close()
	start := time.Now()
	Expect(seedIndex(ctx, store, n)).To(Succeed())
	b.Logf("wrote %d index records in %s", n, time.Since(start))
	client, err := bosh.New(bosh.Options{Address: "https://127.0.0.1:1", Username: "u", Password: "p"})
	Expect(err).NotTo(HaveOccurred())
	clock := time.Now()
	m, err := reconciler.New(reconciler.Options{Config: testConfig(), Store: store, Catalog: testCatalog,
		Directors: []ports.NamedDirector{{Director: client, Tasks: client}}, Registerer: prometheus.NewRegistry(),
		Now: func() time.Time { return clock }})
	Expect(err).NotTo(HaveOccurred())
	q := reconciler.InstanceQuery{Search: "team04", State: reconciler.StateOK, After: fleetID(n / 2)}
	b.Run("reading the index", func(b *testing.B) {
		for b.Loop() {
			clock = clock.Add(time.Minute)
			p, err := m.Views().List(ctx, q)
			Expect(err).NotTo(HaveOccurred())
			Expect(p.Instances).NotTo(BeEmpty())
		}
	})
	for name, q := range map[string]reconciler.InstanceQuery{"from the last read": q, "from the last read, no filter": {}} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				p, err := m.Views().List(ctx, q)
				Expect(err).NotTo(HaveOccurred())
				Expect(strings.HasPrefix(p.Instances[0].InstanceID, "inst-")).To(BeTrue())
			}
		})
	}
}
