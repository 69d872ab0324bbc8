package vault_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Exporting the legacy Blacksmith index (the way back)", func() {
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

			It("goes there and back: every legacy field kept, what the reconciler restored added, the deprovisioned gone, the old db backed up", func() {
				db := legacyDB(300)
				db["nested"] = json.RawMessage(`{"service_id":"redis","plan_id":"redis-small","x_vendor":{"deep":{"list":[1,{"k":"v"}],"n":null}}}`)
				body, _ := json.Marshal(db)
				rawPut(srv, mount, version, "db", string(body))
				_, err := store.Maintenance.Migrate(ctx)
				Expect(err).NotTo(HaveOccurred())

				export, err := store.Maintenance.ExportLegacy(ctx, false, time.Now())
				Expect(err).NotTo(HaveOccurred())
				Expect(export.Added).To(BeEmpty())
				Expect(export.Changed).To(BeEmpty())
				Expect(export.Removed).To(BeEmpty())
				Expect(export.Unchanged).To(Equal(len(db)), "right after the migration, nothing differs")

				// What the reconciler does meanwhile: restore an instance the db lacked, flag an
				// orphan, and the broker deprovisions one.
				gone := "6f1c0001-aaaa-bbbb-cccc-000000000001"
				_, err = store.Update(ctx, map[string]vault.Change{
					"restored-1": put(rec("redis", "redis-small")),
					"minimal": func(cur *vault.Record) (*vault.Record, error) {
						cur.Orphaned, cur.OrphanedAt = true, "2026-11-27T00:00:00Z"
						return cur, nil
					},
				})
				Expect(err).NotTo(HaveOccurred())
				Expect(store.Indexes.Remove(ctx, gone)).To(Succeed())

				dry, err := store.Maintenance.ExportLegacy(ctx, false, time.Now())
				Expect(err).NotTo(HaveOccurred())
				Expect(dry.Added).To(Equal([]string{"restored-1"}))
				Expect(dry.Changed).To(Equal([]string{"minimal"}))
				Expect(dry.Removed).To(Equal([]string{gone}))
				Expect(dry.Applied).To(BeFalse())
				Expect(rawGet(srv, mount, version, "db").Data).To(MatchJSON(body), "a dry run writes nothing")

				before, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				done, err := store.Maintenance.ExportLegacy(ctx, true, time.Now())
				Expect(err).NotTo(HaveOccurred())
				Expect(done.Applied).To(BeTrue())
				Expect(done.Backup).To(HavePrefix(mount + "/blacksmith/legacy/db-"))
				Expect(rawGet(srv, mount, version, strings.TrimPrefix(done.Backup, mount+"/")).Data).To(MatchJSON(body),
					"the db it replaced, kept")

				var after map[string]json.RawMessage
				Expect(json.Unmarshal([]byte(rawGet(srv, mount, version, "db").Data), &after)).To(Succeed())
				Expect(after).To(HaveLen(len(db)), "one added, one removed")
				for id, raw := range db {
					switch id {
					case gone:
						Expect(after).NotTo(HaveKey(id))
					case "minimal":
						Expect(after[id]).To(MatchJSON(`{"service_id":"pg","plan_id":"pg-1","orphaned":true,"orphaned_at":"2026-11-27T00:00:00Z"}`))
					default:
						Expect(after[id]).To(MatchJSON(raw), "record %s kept byte for byte in meaning", id)
					}
				}
				Expect(after).To(HaveKey("restored-1"))
				Expect(string(after["restored-1"])).To(ContainSubstring(`"service_id":"redis"`))

				again, err := store.Maintenance.ExportLegacy(ctx, true, time.Now())
				Expect(err).NotTo(HaveOccurred())
				Expect(again.Applied).To(BeFalse(), "nothing differs: nothing written")
				idx, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(idx.Records).To(Equal(before.Records), "the product's own index is untouched")
			})

			It("refuses to export what was never migrated", func() {
				_, err := store.Maintenance.ExportLegacy(ctx, true, time.Now())
				Expect(errors.Is(err, vault.ErrNotFound)).To(BeTrue(), "%v", err)
			})
		})
	}
})
