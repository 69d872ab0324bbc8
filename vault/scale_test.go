package vault_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Concurrent updates", func() {
	run := func(version, workers, each int, separateStores bool) (int, int) {
		GinkgoHelper()
		srv := server()
		first, mount := newStore(srv, version)
		_, err := first.Maintenance.Migrate(ctx) // lays out the index once, as cmd/blacksmith does at start
		Expect(err).NotTo(HaveOccurred())
		// All ids fall into 8 shards so that writers really collide.
		ids := idsInShards("c", workers*each, 8)
		var (
			wg     sync.WaitGroup
			mu     sync.Mutex
			writes int
			errs   []error
		)
		for w := range workers {
			s := first
			if separateStores {
				s = openStore(srv.Addr, srv.Token, mount) // as another broker VM would
			}
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for _, id := range ids[w*each : (w+1)*each] {
					res, err := s.Update(ctx, map[string]vault.Change{id: put(rec("svc", "plan-"+id))})
					mu.Lock()
					writes += res.Writes
					if err != nil {
						errs = append(errs, err)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		Expect(errs).To(BeEmpty())
		idx, err := first.Index(ctx)
		Expect(err).NotTo(HaveOccurred())
		for _, id := range ids {
			Expect(idx.Records).To(HaveKey(id))
			Expect(idx.Records[id].PlanID).To(Equal("plan-" + id))
		}
		return len(idx.Records), writes
	}

	It("loses none of 8 goroutines x 200 updates on KV v2, across stores (check-and-set)", func() {
		n, writes := run(2, 8, 200, true)
		Expect(n).To(Equal(1600))
		AddReportEntry("kv2 8x200 writes issued", fmt.Sprint(writes))
		// More writes than updates: conflicts happened and were retried.
		Expect(writes).To(BeNumerically(">", 1600))
	})

	It("loses none of 8 goroutines x 200 updates on KV v1 across stores of one process (serialized)", func() {
		n, writes := run(1, 8, 200, true)
		Expect(n).To(Equal(1600))
		Expect(writes).To(Equal(1600))
	})
})

var _ = Describe("Scale", func() {
	// singleMap is a request body holding one map of n index entries.
	singleMap := func(version, n int) string {
		var b strings.Builder
		b.WriteString(`{`)
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"id-%d":{"service_id":"s","plan_id":"p"}`, i)
		}
		b.WriteString(`}`)
		if version == 2 {
			return `{"data":` + b.String() + `}`
		}
		return b.String()
	}

	for _, version := range []int{1, 2} {
		It(fmt.Sprintf("writes, lists and reads back 25,000 instances against Vault's default listener limits (KV v%d)", version), func() {
			srv := server()
			store, mount := newStore(srv, version)

			By("showing that this Vault refuses a single map of more than 10,000 entries")
			path := "/v1/" + mount + "/single-map"
			if version == 2 {
				path = "/v1/" + mount + "/data/single-map"
			}
			code, out, err := srv.Do(http.MethodPut, path, singleMap(version, 10001))
			Expect(err).NotTo(HaveOccurred())
			AddReportEntry("vault on a 10,001-entry map", fmt.Sprintf("%d %s", code, out))
			Expect(code).NotTo(Equal(http.StatusOK))
			Expect(string(out)).To(ContainSubstring("exceeds allowed entry count"))

			By("writing 25,000 records in one batched update")
			const n = 25000
			changes := make(map[string]vault.Change, n)
			for i := range n {
				id := fmt.Sprintf("%08d-0000-4000-8000-%012d", i, i)
				r := &vault.Record{ServiceID: "redis", PlanID: "small", DeploymentName: "small-" + id, Created: int64(1700000000 + i),
					OrganizationGUID: "org", SpaceGUID: "space", Parameters: map[string]any{"n": json.Number(fmt.Sprint(i))}}
				changes[id] = put(r)
			}
			start := time.Now()
			res, err := store.Update(ctx, changes)
			Expect(err).NotTo(HaveOccurred())
			AddReportEntry("25k cold write", fmt.Sprintf("%s, %d writes", time.Since(start), res.Writes))
			Expect(res.Changed).To(HaveLen(n))
			Expect(res.Writes).To(Equal(vault.DefaultShards))

			By("listing and reading every record back")
			start = time.Now()
			idx, err := store.Index(ctx)
			Expect(err).NotTo(HaveOccurred())
			AddReportEntry("25k Index()", time.Since(start).String())
			Expect(idx.Problems).To(BeEmpty())
			Expect(idx.Records).To(HaveLen(n))
			for i := 0; i < n; i += 997 {
				id := fmt.Sprintf("%08d-0000-4000-8000-%012d", i, i)
				Expect(idx.Records[id].Created).To(Equal(int64(1700000000 + i)))
				Expect(idx.Records[id].Parameters["n"]).To(Equal(json.Number(fmt.Sprint(i))))
			}
			r, err := store.Record(ctx, "00024999-0000-4000-8000-000000024999")
			Expect(err).NotTo(HaveOccurred())
			Expect(r.DeploymentName).To(Equal("small-00024999-0000-4000-8000-000000024999"))
		})
	}

	It("runs a warm pass over 10,000 instances (one Index, no-op changes) with no write and few reads", func() {
		srv := server()
		store, _ := newStore(srv, 2)
		const n = 10000
		changes := make(map[string]vault.Change, n)
		for i := range n {
			id := fmt.Sprintf("warm-%05d", i)
			changes[id] = put(&vault.Record{ServiceID: "redis", PlanID: "small", DeploymentName: "small-" + id,
				Created: 1700000000, ReconciledAt: "2024-01-01T00:00:00Z", Fingerprint: "sha256:0123456789abcdef",
				Extra: map[string]json.RawMessage{"status": json.RawMessage(`"provisioning_completed"`)}})
		}
		_, err := store.Update(ctx, changes)
		Expect(err).NotTo(HaveOccurred())

		before := store.Stats()
		start := time.Now()
		idx, err := store.Index(ctx)
		Expect(err).NotTo(HaveOccurred())
		indexed := time.Since(start)
		Expect(idx.Records).To(HaveLen(n))
		same := make(map[string]vault.Change, n)
		for id := range idx.Records {
			same[id] = func(cur *vault.Record) (*vault.Record, error) { return cur, nil }
		}
		res, err := store.Update(ctx, same)
		Expect(err).NotTo(HaveOccurred())
		elapsed := time.Since(start)
		after := store.Stats()
		AddReportEntry("warm 10k: Index() then Update(10k no-op)", fmt.Sprintf("%s (Index %s), %d reads, %d writes",
			elapsed, indexed, after.Reads-before.Reads, after.Writes-before.Writes))
		Expect(res.Writes).To(BeZero())
		Expect(after.Writes).To(Equal(before.Writes))
		Expect(after.Reads - before.Reads).To(BeNumerically("<=", 2*(vault.DefaultShards+1)))
		// Its wall time is reported above, not asserted: speed is make bench's job.
	})
})
