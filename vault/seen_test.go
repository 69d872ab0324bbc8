package vault_test

import (
	"encoding/json"
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// A run reads the whole index at its start; its index changes then write
// the shards it read over the versions it read, without reading them again.
var _ = Describe("UpdateOver", func() {
	for _, version := range []int{1, 2} {
		Context(fmt.Sprintf("on KV v%d", version), func() {
			var (
				srv   *testvault.Server
				store *vault.Store
				mount string
				ids   []string
			)

			BeforeEach(func() {
				srv = server()
				store, mount = newStore(srv, version)
				ids = idsInShards("s", 12, 4) // shards 0 to 3
				changes := map[string]vault.Change{}
				for _, id := range ids {
					changes[id] = put(rec("svc", "p1"))
				}
				_, err := store.Update(ctx, changes)
				Expect(err).NotTo(HaveOccurred())
			})

			plan := func(p string, these ...string) map[string]vault.Change {
				changes := map[string]vault.Change{}
				for _, id := range these {
					changes[id] = func(cur *vault.Record) (*vault.Record, error) {
						next := cur.Clone()
						next.PlanID = p
						return next, nil
					}
				}
				return changes
			}
			planOf := func(id string) string {
				GinkgoHelper()
				r, err := store.Record(ctx, id)
				Expect(err).NotTo(HaveOccurred())
				return r.PlanID
			}

			It("reads and writes at most the shards it is given at once", func() {
				px := newProxy(srv.Addr, mount)
				px.slowPath, px.slow = "/index/", 20*time.Millisecond // set before any request goes through it
				slow := openStore(px.URL(), srv.Token, mount)
				for _, atOnce := range []int{2, 0} {
					px.most.Store(0)
					res, err := slow.Indexes.UpdateOver(ctx, plan(fmt.Sprintf("p%d", atOnce+10), ids...), nil, atOnce)
					Expect(err).NotTo(HaveOccurred())
					Expect(res.Changed).To(HaveLen(len(ids)))
					if atOnce == 2 {
						Expect(px.most.Load()).To(BeNumerically("==", 2), "4 shards read, then written, 2 at a time")
					} else {
						Expect(px.most.Load()).To(BeNumerically(">", 2), "as Update: 8 at a time")
					}
				}
			})

			It("writes the shards the index read without reading them again, once each", func() {
				base, err := store.Indexes.IndexFrom(ctx, nil)
				Expect(err).NotTo(HaveOccurred())
				reads := store.Stats().Reads
				res, err := store.Indexes.UpdateOver(ctx, plan("p2", ids...), base, 0)
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Changed).To(ConsistOf(ids))
				shards := uint64(4)
				if version == 2 {
					shards = 0
				}
				Expect(store.Stats().Reads-reads).To(Equal(1+shards), "the layout, and the shards only on KV v1")
				for _, id := range ids {
					Expect(planOf(id)).To(Equal("p2"))
				}

				// Given out once: its version is another now.
				reads = store.Stats().Reads
				_, err = store.Indexes.UpdateOver(ctx, plan("p3", ids[0]), base, 0)
				Expect(err).NotTo(HaveOccurred())
				Expect(store.Stats().Reads - reads).To(Equal(uint64(2)))
				Expect(planOf(ids[0])).To(Equal("p3"))
			})

			It("reads the shards of an index Index read, as Update does: only IndexFrom keeps what it needs", func() {
				base, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				reads := store.Stats().Reads
				_, err = store.Indexes.UpdateOver(ctx, plan("p2", ids...), base, 0)
				Expect(err).NotTo(HaveOccurred())
				Expect(store.Stats().Reads-reads).To(Equal(uint64(1+4)), "the layout and the four shards")
				Expect(planOf(ids[0])).To(Equal("p2"))
			})

			It("loses nothing another writer wrote after the index was read", func() {
				base, err := store.Indexes.IndexFrom(ctx, nil)
				Expect(err).NotTo(HaveOccurred())
				other := openStore(srv.Addr, srv.Token, mount)
				_, err = other.Update(ctx, map[string]vault.Change{"new-one": put(rec("svc", "theirs"))})
				Expect(err).NotTo(HaveOccurred())
				_, err = other.Update(ctx, plan("theirs", ids[1]))
				Expect(err).NotTo(HaveOccurred())

				_, err = store.Indexes.UpdateOver(ctx, plan("ours", ids[0], ids[2]), base, 0)
				Expect(err).NotTo(HaveOccurred())
				Expect(planOf("new-one")).To(Equal("theirs"))
				Expect(planOf(ids[1])).To(Equal("theirs"))
				Expect(planOf(ids[0])).To(Equal("ours"))
				Expect(planOf(ids[2])).To(Equal("ours"))
				idx, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(idx.Records).To(HaveLen(len(ids) + 1))
			})

			It("reads a shard that holds a record it could not decode whole, and keeps that record's bytes", func() {
				id := ids[0]
				sh := vault.ShardOf(id, vault.DefaultShards)
				var other string
				for _, o := range ids[1:] {
					if vault.ShardOf(o, vault.DefaultShards) == sh {
						other = o
						break
					}
				}
				Expect(other).NotTo(BeEmpty(), "12 ids in 4 shards: one shares the shard of the first")
				_, err := store.Update(ctx, map[string]vault.Change{other: func(cur *vault.Record) (*vault.Record, error) {
					next := cur.Clone()
					next.Extra = map[string]json.RawMessage{"created": json.RawMessage(`"yesterday"`)}
					return next, nil
				}})
				Expect(err).NotTo(HaveOccurred())
				base, err := store.Indexes.IndexFrom(ctx, nil)
				Expect(err).NotTo(HaveOccurred())
				Expect(base.Problems).To(HaveLen(1))
				reads := store.Stats().Reads
				_, err = store.Indexes.UpdateOver(ctx, plan("p2", id), base, 0)
				Expect(err).NotTo(HaveOccurred())
				Expect(store.Stats().Reads-reads).To(Equal(uint64(2)), "the layout and the shard")
				Expect(planOf(id)).To(Equal("p2"))
				Expect(rawGet(srv, mount, version, vault.ShardPath(sh)).Data).To(ContainSubstring(`"created":"yesterday"`))
			})
		})
	}
})
