package vault_test

import (
	"errors"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("A deleted layout document (KV v2)", func() {
	It("fails reads, updates and migration with a hint, and writes nothing", func() {
		srv := server()
		store, mount := newStore(srv, 2)
		ids := idsInShards("kept", 20, vault.DefaultShards)
		_, err := store.Update(ctx, touchAllWith(ids, "p"))
		Expect(err).NotTo(HaveOccurred())
		// `vault kv delete`: the latest version is deleted, the shards remain.
		code, out, err := srv.Do(http.MethodDelete, "/v1/"+mount+"/data/blacksmith/index/meta", "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code/100).To(Equal(2), string(out))
		before := indexState(srv, mount, 2)

		_, err = store.Update(ctx, touchAllWith(ids, "q"))
		Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("vault kv undelete -versions=1 " + mount + "/blacksmith/index/meta"))
		idx, err := store.Index(ctx)
		Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
		Expect(idx).To(BeNil(), "never an empty index while the shards hold records")
		Expect(indexState(srv, mount, 2)).To(Equal(before))

		By("refusing to migrate a legacy index over the shards")
		rawPut(srv, mount, 2, "db", `{"`+ids[0]+`":{"plan_id":"legacy","service_id":"s"}}`)
		before = indexState(srv, mount, 2)
		_, err = store.Maintenance.Migrate(ctx)
		Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
		Expect(indexState(srv, mount, 2)).To(Equal(before))

		By("working again once it is undeleted")
		code, out, err = srv.Do(http.MethodPost, "/v1/"+mount+"/undelete/blacksmith/index/meta", `{"versions":[1]}`)
		Expect(err).NotTo(HaveOccurred())
		Expect(code/100).To(Equal(2), string(out))
		idx, err = store.Index(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(idx.Records).To(HaveLen(len(ids)))
		Expect(idx.Records[ids[0]].PlanID).To(Equal("p"))
	})
})

var _ = Describe("A deleted shard (KV v2)", func() {
	It("fails reads and updates with a hint rather than hide its records, and writes nothing", func() {
		srv := server()
		store, mount := newStore(srv, 2)
		ids := idsInShards("sh", 40, 4)
		_, err := store.Update(ctx, touchAllWith(ids, "p"))
		Expect(err).NotTo(HaveOccurred())
		shard := vault.ShardPath(vault.ShardOf(ids[0], vault.DefaultShards))
		code, out, err := srv.Do(http.MethodDelete, "/v1/"+mount+"/data/"+shard, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code/100).To(Equal(2), string(out))
		before := indexState(srv, mount, 2)

		idx, err := store.Index(ctx)
		Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("vault kv undelete -versions=1 " + mount + "/" + shard))
		Expect(idx).To(BeNil(), "never an index without that shard's records")
		_, err = store.Record(ctx, ids[0])
		Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
		_, err = store.Update(ctx, touchAllWith(ids, "q"))
		Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
		Expect(indexState(srv, mount, 2)).To(Equal(before))
	})
})

var _ = Describe("A missing layout document while shards exist", func() {
	for _, version := range []int{1, 2} {
		It(fmt.Sprintf("fails reads and updates with the document to write back, on KV v%d", version), func() {
			srv := server()
			store, mount := newStore(srv, version)
			ids := idsInShards("kept", 20, vault.DefaultShards)
			_, err := store.Update(ctx, touchAllWith(ids, "p"))
			Expect(err).NotTo(HaveOccurred())
			path := "/v1/" + mount + "/blacksmith/index/meta"
			if version == 2 {
				path = "/v1/" + mount + "/metadata/blacksmith/index/meta" // every version gone
			}
			code, out, err := srv.Do(http.MethodDelete, path, "")
			Expect(err).NotTo(HaveOccurred())
			Expect(code/100).To(Equal(2), string(out))
			before := indexState(srv, mount, version)

			idx, err := store.Index(ctx)
			Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
			Expect(idx).To(BeNil(), "never an empty index while the shards hold records")
			Expect(err.Error()).To(ContainSubstring(`write it back: {"layout_version":1,"shards":128,"hash":"sha256-be32"}`))
			_, err = store.Record(ctx, ids[0])
			Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
			_, err = store.Update(ctx, touchAllWith(ids, "q"))
			Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
			Expect(indexState(srv, mount, version)).To(Equal(before))

			By("working again once it is written back as the error says")
			rawPut(srv, mount, version, "blacksmith/index/meta", `{"layout_version":1,"shards":128,"hash":"sha256-be32"}`)
			idx, err = store.Index(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(idx.Records).To(HaveLen(len(ids)))
		})
	}
})

// touchAllWith sets every id's record to service "s" and the given plan.
func touchAllWith(ids []string, plan string) map[string]vault.Change {
	changes := map[string]vault.Change{}
	for _, id := range ids {
		changes[id] = put(&vault.Record{ServiceID: "s", PlanID: plan})
	}
	return changes
}
