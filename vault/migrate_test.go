package vault_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// legacyDB builds a Blacksmith-shaped `db` map: n ordinary records plus the
// odd ones real installations hold.
func legacyDB(n int) map[string]json.RawMessage {
	db := map[string]json.RawMessage{}
	for i := range n {
		id := fmt.Sprintf("6f1c%04d-aaaa-bbbb-cccc-%012d", i, i)
		db[id] = json.RawMessage(fmt.Sprintf(`{"service_id":"redis","plan_id":"redis-small","created":%d,`+
			`"created_at":"2024-01-01T00:00:00Z","requested_at":"2024-01-01T00:00:00Z","status":"provisioning_completed",`+
			`"organization_guid":"org-%d","space_guid":"space-%d","instance_name":"cache-%d",`+
			`"plan":{"id":"redis-small","name":"Small"},"context":{"platform":"cloudfoundry"},"reconciled":true}`,
			1700000000+i, i%7, i%13, i))
	}
	db["float-created"] = json.RawMessage(`{"service_id":"pg","plan_id":"pg-1","created":1700000000.5}`)
	db["minimal"] = json.RawMessage(`{"service_id":"pg","plan_id":"pg-1"}`)
	db["not-an-object"] = json.RawMessage(`"legacy garbage"`)
	return db
}

var _ = Describe("Migrating a legacy Blacksmith index", func() {
	for _, version := range []int{1, 2} {
		Context(fmt.Sprintf("on KV v%d", version), func() {
			var (
				srv   *testvault.Server
				store *vault.Store
				mount string
			)
			BeforeEach(func() {
				srv = server()
				store, mount = newStore(srv, version)
			})

			It("copies every record with every field, and leaves the original untouched", func() {
				db := legacyDB(2000)
				body, _ := json.Marshal(db)
				rawPut(srv, mount, version, "db", string(body))
				original := rawGet(srv, mount, version, "db")

				By("refusing to read or write around an unmigrated index")
				_, err := store.Index(ctx)
				Expect(errors.Is(err, vault.ErrNotMigrated)).To(BeTrue(), "%v", err)
				_, err = store.Update(ctx, map[string]vault.Change{"new": put(rec("s", "p"))})
				Expect(errors.Is(err, vault.ErrNotMigrated)).To(BeTrue(), "%v", err)

				rep, err := store.Maintenance.Migrate(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(rep.LegacyFound).To(BeTrue())
				Expect(rep.AlreadyMigrated).To(BeFalse())
				Expect(rep.Records).To(Equal(len(db)))
				Expect(rep.LayoutVersion).To(Equal(vault.LayoutVersion))
				Expect(rep.Writes).To(BeNumerically("<=", vault.DefaultShards))
				Expect(rep.Problems).To(HaveLen(2)) // the float "created" and the non-object
				for _, p := range rep.Problems {
					Expect(errors.Is(p, vault.ErrCorrupt)).To(BeTrue())
				}

				By("keeping the legacy document byte for byte")
				Expect(rawGet(srv, mount, version, "db")).To(Equal(original))

				By("holding every legacy record, byte for byte, in its shard")
				found := 0
				for i := range vault.DefaultShards {
					doc := rawGet(srv, mount, version, vault.ShardPath(i))
					if doc.Code != 200 {
						continue
					}
					var entries map[string]json.RawMessage
					Expect(json.Unmarshal([]byte(doc.Data), &entries)).To(Succeed())
					for id, raw := range entries {
						Expect(string(raw)).To(MatchJSON(db[id]), id)
						Expect(vault.ShardOf(id, vault.DefaultShards)).To(Equal(i))
						found++
					}
				}
				Expect(found).To(Equal(len(db)))

				By("serving the migrated records")
				idx, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(idx.Records).To(HaveLen(len(db) - 1))
				Expect(idx.Problems).To(HaveLen(2))
				r := idx.Records["6f1c0003-aaaa-bbbb-cccc-000000000003"]
				Expect(r.Created).To(Equal(int64(1700000003)))
				Expect(r.OrganizationGUID).To(Equal("org-3"))
				Expect(string(r.Extra["plan"])).To(Equal(`{"id":"redis-small","name":"Small"}`))

				By("recording the layout version")
				meta := rawGet(srv, mount, version, "blacksmith/index/meta")
				Expect(meta.Data).To(ContainSubstring(`"layout_version":1`))
				Expect(meta.Data).To(ContainSubstring(`"migrated_records":2003`))

				By("doing nothing the second time")
				before := store.Stats().Writes
				rep, err = store.Maintenance.Migrate(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(rep.AlreadyMigrated).To(BeTrue())
				Expect(store.Stats().Writes).To(Equal(before))
			})

			It("completes a migration that was interrupted", func() {
				db := legacyDB(300)
				body, _ := json.Marshal(db)
				rawPut(srv, mount, version, "db", string(body))
				var someID string
				for id := range db {
					someID = id
					break
				}
				shard := vault.ShardPath(vault.ShardOf(someID, vault.DefaultShards))
				rawPut(srv, mount, version, shard, `{"`+someID+`":`+string(db[someID])+`}`)

				rep, err := store.Maintenance.Migrate(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(rep.Records).To(Equal(len(db)))
				idx, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(len(idx.Records) + 1).To(Equal(len(db)))
			})

			It("never overwrites a record that a migration did not write", func() {
				ids := idsInShards("live", 20, vault.DefaultShards)
				_, err := store.Update(ctx, touchAllWith(ids, "current"))
				Expect(err).NotTo(HaveOccurred())
				rawPut(srv, mount, version, "db", `{"`+ids[0]+`":{"plan_id":"stale","service_id":"s"}}`)
				path := "/v1/" + mount + "/blacksmith/index/meta"
				if version == 2 {
					path = "/v1/" + mount + "/metadata/blacksmith/index/meta"
				}
				code, out, err := srv.Do(http.MethodDelete, path, "")
				Expect(err).NotTo(HaveOccurred())
				Expect(code/100).To(Equal(2), string(out))
				before := indexState(srv, mount, version)

				_, err = store.Maintenance.Migrate(ctx)
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("already holds record %q", ids[0])))
				Expect(err.Error()).To(ContainSubstring("nothing overwritten"))
				Expect(indexState(srv, mount, version)).To(Equal(before))
			})

			It("records the layout when there is no legacy index", func() {
				rep, err := store.Maintenance.Migrate(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(rep.LegacyFound).To(BeFalse())
				Expect(rep.Shards).To(Equal(vault.DefaultShards))
				Expect(rawGet(srv, mount, version, "blacksmith/index/meta").Data).To(ContainSubstring(`"shards":128`))
			})
		})
	}
})
