package vault_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// A run keeps the index it read; the next one reads again only the shards
// that changed since, and tells the others by their metadata.
var _ = Describe("IndexFrom", func() {
	for _, version := range []int{1, 2} {
		Context(fmt.Sprintf("on KV v%d", version), func() {
			var (
				srv   *testvault.Server
				store *vault.Store
				mount string
				ids   []string
				prev  *vault.Index
			)

			BeforeEach(func() {
				srv = server()
				store, mount = newStore(srv, version)
				ids = idsInShards("k", 12, 4) // shards 0 to 3
				changes := map[string]vault.Change{}
				for _, id := range ids {
					changes[id] = put(rec("svc", "p1"))
				}
				_, err := store.Update(ctx, changes)
				Expect(err).NotTo(HaveOccurred())
				prev, err = store.Indexes.IndexFrom(ctx, nil)
				Expect(err).NotTo(HaveOccurred())
			})

			// read is IndexFrom(prev), checked against a fresh Index; it
			// returns the result and its shard data reads and metadata
			// reads (the layout's read aside).
			read := func() (*vault.Index, int, int) {
				GinkgoHelper()
				before := store.Stats()
				idx, err := store.Indexes.IndexFrom(ctx, prev)
				Expect(err).NotTo(HaveOccurred())
				after := store.Stats()
				fresh, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(idx.Records).To(Equal(fresh.Records))
				Expect(idx.Problems).To(Equal(fresh.Problems))
				checks := int(after.Checks - before.Checks)
				return idx, int(after.Reads-before.Reads) - checks - 1, checks
			}
			// absent is the number of shards never written (read each time).
			absent := vault.DefaultShards - 4
			shardOf := func(id string) int { return vault.ShardOf(id, vault.DefaultShards) }
			planOf := func(idx *vault.Index, id string) string {
				GinkgoHelper()
				Expect(idx.Records).To(HaveKey(id))
				return idx.Records[id].PlanID
			}

			It("reads no shard that is unchanged since (KV v2), and gives what Index gives", func() {
				idx, reads, checks := read()
				Expect(idx.Records).To(HaveLen(len(ids)))
				if version == 1 {
					Expect(reads).To(Equal(vault.DefaultShards), "KV v1 has no versions: every shard is read")
					Expect(checks).To(BeZero())
					return
				}
				Expect(checks).To(Equal(4), "the four written shards, by their metadata")
				Expect(reads).To(Equal(absent))

				prev = idx // and again, from what it made
				_, reads, checks = read()
				Expect(checks).To(Equal(4))
				Expect(reads).To(Equal(absent))
			})

			It("reads again a shard another writer changed, and only that one", func() {
				other := openStore(srv.Addr, srv.Token, mount)
				_, err := other.Update(ctx, map[string]vault.Change{ids[0]: put(rec("svc", "theirs"))})
				Expect(err).NotTo(HaveOccurred())
				idx, reads, _ := read()
				Expect(planOf(idx, ids[0])).To(Equal("theirs"))
				if version == 2 {
					Expect(reads).To(Equal(absent + 1))
				}
			})

			It("reads again, without asking its metadata, a shard written by its own store over the index it read", func() {
				_, err := store.Indexes.UpdateOver(ctx, map[string]vault.Change{ids[1]: put(rec("svc", "ours"))}, prev, 0)
				Expect(err).NotTo(HaveOccurred())
				idx, reads, checks := read()
				Expect(planOf(idx, ids[1])).To(Equal("ours"))
				Expect(planOf(prev, ids[1])).To(Equal("p1"), "the records of the index kept are not changed")
				if version == 2 {
					Expect(reads).To(Equal(absent + 1))
					Expect(checks).To(Equal(3))
				}
			})

			It("writes a shard it kept over the version kept, without reading it", func() {
				idx, _, _ := read()
				before := store.Stats().Reads
				_, err := store.Indexes.UpdateOver(ctx, map[string]vault.Change{ids[2]: put(rec("svc", "over"))}, idx, 0)
				Expect(err).NotTo(HaveOccurred())
				if version == 2 {
					Expect(store.Stats().Reads-before).To(Equal(uint64(1)), "the layout only")
				}
				idx, _, _ = read()
				Expect(planOf(idx, ids[2])).To(Equal("over"))
			})

			if version == 2 {
				p := func(id string) string { return vault.ShardPath(shardOf(id)) }

				It("reads again a shard whose metadata was deleted and written again, at the same version", func() {
					// two ids of one shard: 12 ids in 4 shards
					var id, mate string
					for i, a := range ids {
						for _, b := range ids[i+1:] {
							if id == "" && shardOf(a) == shardOf(b) {
								id, mate = a, b
							}
						}
					}
					Expect(prev.Records).To(HaveKey(mate))
					Expect(rawGet(srv, mount, version, p(id)).Version).To(Equal(1), "kept at version 1")
					code, out, err := srv.Do(http.MethodDelete, "/v1/"+mount+"/metadata/"+p(id), "")
					Expect(err).NotTo(HaveOccurred())
					Expect(code/100).To(Equal(2), string(out))
					rawPut(srv, mount, version, p(id), `{"`+id+`":{"service_id":"svc","plan_id":"again"}}`)
					Expect(rawGet(srv, mount, version, p(id)).Version).To(Equal(1), "version 1 again, as the kept one")

					idx, reads, _ := read()
					Expect(planOf(idx, id)).To(Equal("again"))
					Expect(idx.Records).NotTo(HaveKey(mate), "nor what the shard held before")
					Expect(reads).To(Equal(absent + 1))
				})

				It("fails as Index does on a shard whose current version was deleted", func() {
					code, out, err := srv.Do(http.MethodDelete, "/v1/"+mount+"/data/"+p(ids[0]), "")
					Expect(err).NotTo(HaveOccurred())
					Expect(code/100).To(Equal(2), string(out))
					_, err = store.Indexes.IndexFrom(ctx, prev)
					Expect(err).To(MatchError(vault.ErrCorrupt))
					Expect(err.Error()).To(ContainSubstring("vault kv undelete"))
				})

				It("fails as Index does on a shard whose current version was destroyed", func() {
					code, out, err := srv.Do(http.MethodPut, "/v1/"+mount+"/destroy/"+p(ids[0]),
						fmt.Sprintf(`{"versions":[%d]}`, rawGet(srv, mount, version, p(ids[0])).Version))
					Expect(err).NotTo(HaveOccurred())
					Expect(code/100).To(Equal(2), string(out))
					_, err = store.Indexes.IndexFrom(ctx, prev)
					Expect(err).To(MatchError(vault.ErrCorrupt), "destroyed: as Index says")
				})

				It("reads the shards whole, with one warning, when the token may not read their metadata", func() {
					policy := fmt.Sprintf(`path "%[1]s/*" { capabilities = ["create","read","update","delete","list"] }
path "%[1]s/metadata/blacksmith/index/*" { capabilities = ["create","update","delete","list"] }`, mount)
					body, _ := json.Marshal(map[string]string{"policy": policy})
					code, out, err := srv.Do(http.MethodPut, "/v1/sys/policies/acl/"+mount, string(body))
					Expect(err).NotTo(HaveOccurred())
					Expect(code/100).To(Equal(2), string(out))
					logs := gbytes.NewBuffer()
					limited := openStore(srv.Addr, createToken(srv, fmt.Sprintf(`{"policies":["%s"],"ttl":"1h"}`, mount)), mount,
						func(o *vault.Options) { o.Logger = slog.New(slog.NewTextHandler(logs, nil)) })

					first, err := limited.Indexes.IndexFrom(ctx, nil)
					Expect(err).NotTo(HaveOccurred())
					before := limited.Stats()
					for range 2 {
						idx, err := limited.Indexes.IndexFrom(ctx, first)
						Expect(err).NotTo(HaveOccurred())
						Expect(idx.Records).To(Equal(prev.Records))
					}
					after := limited.Stats()
					Expect(after.Checks-before.Checks).To(BeNumerically("<=", 2*8), "at most one refusal a reader, each read")
					Expect((after.Reads - after.Checks) - (before.Reads - before.Checks)).To(Equal(uint64(2 * (1 + vault.DefaultShards))))
					Expect(strings.Count(string(logs.Contents()), "may not read their metadata")).To(Equal(2), "once a read")
				})

				It("reads every shard of a layout with another shard count", func() {
					_, err := store.Indexes.Reshard(ctx, 2*vault.DefaultShards)
					Expect(err).NotTo(HaveOccurred())
					before := store.Stats()
					idx, err := store.Indexes.IndexFrom(ctx, prev)
					Expect(err).NotTo(HaveOccurred())
					Expect(store.Stats().Checks - before.Checks).To(BeZero())
					Expect(idx.Shards).To(Equal(2 * vault.DefaultShards))
					Expect(idx.Records).To(HaveLen(len(ids)))
				})
			}
		})
	}
})
