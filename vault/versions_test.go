package vault_test

import (
	"encoding/json"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("the index's KV versions", func() {
	maxVersions := func(srv *testvault.Server, mount, path string) float64 {
		GinkgoHelper()
		code, out, err := srv.Do(http.MethodGet, "/v1/"+mount+"/metadata/"+path, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK), path+": "+string(out))
		var md struct {
			Data struct {
				MaxVersions float64 `json:"max_versions"`
			} `json:"data"`
		}
		Expect(json.Unmarshal(out, &md)).To(Succeed())
		return md.Data.MaxVersions
	}
	touch := func(id string) map[string]vault.Change {
		return map[string]vault.Change{id: func(*vault.Record) (*vault.Record, error) {
			return &vault.Record{ServiceID: "redis", PlanID: "small"}, nil
		}}
	}

	It("are bounded by Migrate at start, once, and a re-shard bounds its new shards", func(ctx SpecContext) {
		srv := server()
		store, m := newStore(srv, 2)
		_, err := store.Maintenance.Migrate(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(maxVersions(srv, m, "blacksmith/index/meta")).To(BeNumerically("==", vault.IndexMaxVersions))
		Expect(maxVersions(srv, m, vault.ShardPath(0))).To(BeNumerically("==", vault.IndexMaxVersions))
		Expect(maxVersions(srv, m, vault.ShardPath(127))).To(BeNumerically("==", vault.IndexMaxVersions))

		before := store.Stats().Writes
		_, err = store.Maintenance.Migrate(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(store.Stats().Writes).To(Equal(before), "recorded in the layout: not again")

		// a shard written many times keeps 3 versions
		const id = "inst-versions"
		for range 6 {
			_, err := store.Update(ctx, touch(id))
			Expect(err).NotTo(HaveOccurred())
			_, err = store.Update(ctx, map[string]vault.Change{id: func(r *vault.Record) (*vault.Record, error) {
				r.PlanID += "x"
				return r, nil
			}})
			Expect(err).NotTo(HaveOccurred())
		}
		shard := vault.ShardPath(vault.ShardOf(id, vault.DefaultShards))
		code, out, err := srv.Do(http.MethodGet, "/v1/"+m+"/metadata/"+shard, "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK))
		var md struct {
			Data struct {
				Versions map[string]any `json:"versions"`
			} `json:"data"`
		}
		Expect(json.Unmarshal(out, &md)).To(Succeed())
		Expect(md.Data.Versions).To(HaveLen(vault.IndexMaxVersions))

		_, err = store.Indexes.Reshard(ctx, 256)
		Expect(err).NotTo(HaveOccurred())
		Expect(maxVersions(srv, m, "blacksmith/index/v1/shards-256/0255")).To(BeNumerically("==", vault.IndexMaxVersions))
	})

	It("are left at the mount's default, with a warning, when the token may not write their metadata", func(ctx SpecContext) {
		srv := server()
		m := newMount(srv, 2)
		policy := fmt.Sprintf(`path "%[1]s/*" { capabilities = ["create","read","update","delete","list"] }
path "%[1]s/metadata/blacksmith/index/*" { capabilities = ["read","list","delete"] }`, m)
		body, _ := json.Marshal(map[string]string{"policy": policy})
		code, out, err := srv.Do(http.MethodPut, "/v1/sys/policies/acl/"+m, string(body))
		Expect(err).NotTo(HaveOccurred())
		Expect(code/100).To(Equal(2), string(out))
		token := createToken(srv, fmt.Sprintf(`{"policies":["%s"],"ttl":"1h"}`, m))
		store := openStore(srv.Addr, token, m)

		rep, err := store.Maintenance.Migrate(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Shards).To(Equal(vault.DefaultShards))
		_, err = store.Update(ctx, touch("inst-1"))
		Expect(err).NotTo(HaveOccurred(), "the index works as before")
		Expect(maxVersions(srv, m, "blacksmith/index/meta")).To(BeZero())
	})
})
