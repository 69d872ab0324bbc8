package vault_test

import (
	"fmt"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("A Change that panics", func() {
	for _, version := range []int{1, 2} {
		It(fmt.Sprintf("is an error naming the instance, with nothing written, on KV v%d", version), func() {
			srv := server()
			store, mount := newStore(srv, version)
			_, err := store.Update(ctx, map[string]vault.Change{"calm": put(rec("s", "p"))})
			Expect(err).NotTo(HaveOccurred())
			before := indexState(srv, mount, version)

			res, err := store.Update(ctx, map[string]vault.Change{
				"calm":  put(rec("s", "q")),
				"panic": func(*vault.Record) (*vault.Record, error) { panic("boom") },
			})
			Expect(err).To(MatchError(ContainSubstring("change of panic: panicked: boom")))
			Expect(err).To(MatchError(ContainSubstring("nothing written")))
			Expect(res.Writes).To(BeZero())
			Expect(indexState(srv, mount, version)).To(Equal(before))
		})
	}

	It("is an error, not a crash, when it panics on the retry after a conflict (KV v2)", func() {
		srv := server()
		store, mount := newStore(srv, 2)
		id := "retry-1"
		shard := vault.ShardPath(vault.ShardOf(id, vault.DefaultShards))
		_, err := store.Update(ctx, map[string]vault.Change{id: put(rec("s", "p"))})
		Expect(err).NotTo(HaveOccurred())

		var calls atomic.Int32
		res, err := store.Update(ctx, map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
			if calls.Add(1) == 1 {
				// Another writer changes the shard between read and write.
				rawPut(srv, mount, 2, shard, `{"`+id+`":{"plan_id":"other","service_id":"s"}}`)
				cur.PlanID = "mine"
				return cur, nil
			}
			panic("second call")
		}})
		Expect(calls.Load()).To(Equal(int32(2)), "the change ran again after the conflict")
		Expect(err).To(MatchError(ContainSubstring("panicked: second call")))
		Expect(res.Changed).To(BeEmpty())
		r, err := store.Record(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.PlanID).To(Equal("other"), "the other writer's update is kept")
	})
})
