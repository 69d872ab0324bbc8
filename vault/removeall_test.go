package vault_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// secretsOf are the secrets the broker keeps for an instance with two
// bindings, relative to the instance.
var secretsOf = []string{"binding-ids", "bindings/b1", "bindings/b2", "credentials"}

var _ = Describe("Backups that hold secrets", func() {
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

			// provision gives id what a provisioned instance with two bindings
			// has: a record, metadata, a manifest and the broker's secrets.
			provision := func(s *vault.Store, id string) {
				GinkgoHelper()
				r := rec("redis", "small")
				r.Parameters = map[string]any{"ratio": json.Number("2.50")}
				r.Extra = map[string]json.RawMessage{"status": json.RawMessage(`"provisioning_completed"`)}
				_, err := s.Update(ctx, map[string]vault.Change{id: put(r)})
				Expect(err).NotTo(HaveOccurred())
				md := &vault.Metadata{Releases: []vault.Resource{{Name: "redis", Version: "1"}}}
				md.AddHistory(vault.HistoryEntry{Time: "2024-01-01T00:00:00Z", Action: "created"}, 0)
				Expect(s.Documents.PutMetadata(ctx, id, md)).To(Succeed())
				Expect(s.PutManifest(ctx, id, "name: "+id+"\n# <&>\n")).To(Succeed())
				Expect(s.PutSecret(ctx, id+"/credentials", map[string]any{
					"username": "u1", "password": "p<&>w", "port": json.Number("6379"), "ratio": json.Number("1.50"),
				})).To(Succeed())
				Expect(s.PutSecret(ctx, id+"/binding-ids", map[string]any{"ids": []any{"b1", "b2"}})).To(Succeed())
				for _, bid := range []string{"b1", "b2"} {
					Expect(s.PutSecret(ctx, id+"/bindings/"+bid, map[string]any{
						"app_guid": "app-" + bid, "credentials": map[string]any{"password": "pw-" + bid, "hosts": []any{"10.0.0.1"}},
					})).To(Succeed())
				}
			}
			// recordBytes is id's index entry as stored, "" when absent.
			recordBytes := func(id string) string {
				GinkgoHelper()
				doc := rawGet(srv, mount, version, vault.ShardPath(vault.ShardOf(id, vault.DefaultShards)))
				if doc.Code != http.StatusOK {
					return ""
				}
				var entries map[string]json.RawMessage
				Expect(json.Unmarshal([]byte(doc.Data), &entries)).To(Succeed())
				return string(entries[id])
			}
			// secretData is every secret of id as stored ("" when absent).
			secretData := func(id string) map[string]string {
				GinkgoHelper()
				out := map[string]string{}
				for _, p := range secretsOf {
					out[p] = rawGet(srv, mount, version, id+"/"+p).Data
				}
				return out
			}
			backupsOf := func(id string) []string {
				GinkgoHelper()
				b, err := store.Backups(ctx, id)
				Expect(err).NotTo(HaveOccurred())
				return b
			}
			allSecrets := func(id string) []string {
				var out []string
				for _, p := range secretsOf {
					out = append(out, id+"/"+p)
				}
				return out
			}

			It("brings back record, metadata, manifest and every secret byte for byte after a RemoveAll", func() {
				provision(store, "d1")
				provision(store, "d1-neighbour")
				record, secrets := recordBytes("d1"), secretData("d1")
				metadata, manifest := rawGet(srv, mount, version, "d1/metadata").Data, rawGet(srv, mount, version, "d1/manifest").Data
				Expect(secrets).To(HaveEach(Not(BeEmpty())))

				backupID, err := store.RemoveAll(ctx, "d1")
				Expect(err).NotTo(HaveOccurred())
				Expect(backupsOf("d1")).To(Equal([]string{backupID}))
				Expect(recordBytes("d1")).To(BeEmpty())
				for p, data := range secretData("d1") {
					Expect(data).To(BeEmpty(), p)
				}
				Expect(rawGet(srv, mount, version, "d1/metadata").Data).To(Equal(metadata), "kept")
				Expect(rawGet(srv, mount, version, "d1/manifest").Data).To(Equal(manifest), "kept")
				Expect(secretData("d1-neighbour")).To(HaveKeyWithValue("credentials", Not(BeEmpty())))
				Expect(recordBytes("d1-neighbour")).NotTo(BeEmpty())

				parts, err := store.Archive.BackupParts(ctx, "d1", backupID)
				Expect(err).NotTo(HaveOccurred())
				expectRemovalBackup(parts, allSecrets("d1"))

				By("removing it again: nothing left, no new backup")
				again, err := store.RemoveAll(ctx, "d1")
				Expect(err).NotTo(HaveOccurred())
				Expect(again).To(BeEmpty())
				Expect(backupsOf("d1")).To(Equal([]string{backupID}))

				By("restoring the newest backup")
				Expect(store.Restores.Restore(ctx, "d1", backupsOf("d1")[0])).To(Succeed())
				Expect(recordBytes("d1")).To(Equal(record))
				Expect(secretData("d1")).To(Equal(secrets))
				Expect(rawGet(srv, mount, version, "d1/manifest").Data).To(Equal(manifest))
				Expect(withoutLastHistory(rawGet(srv, mount, version, "d1/metadata").Data)).To(Equal(metadata),
					"the same but for the restored history entry")
			})

			It("leaves a newest backup with every secret when a RemoveAll that failed half-way is retried", func() {
				provision(store, "h1")
				secrets := secretData("h1")
				px := newProxy(srv.Addr, mount)
				flaky := openStore(px.URL(), srv.Token, mount)
				// Deletes go in path order: binding-ids and bindings/b1 go, b2 fails.
				px.setFault(failRequest(http.MethodDelete, "/h1/bindings/b2", http.StatusInternalServerError, `{"errors":["injected"]}`))

				first, err := flaky.RemoveAll(ctx, "h1")
				Expect(err).To(MatchError(ContainSubstring(first)))
				Expect(secretData("h1")).To(SatisfyAll(HaveKeyWithValue("binding-ids", ""), HaveKeyWithValue("bindings/b1", "")))
				Expect(secretData("h1")["credentials"]).NotTo(BeEmpty())

				By("retrying with nothing changed: the first backup holds all that is left, none is taken")
				again, err := flaky.RemoveAll(ctx, "h1")
				Expect(err).To(HaveOccurred())
				Expect(again).To(Equal(first))
				Expect(backupsOf("h1")).To(Equal([]string{first}))

				By("retrying after the record changed: a new backup carries what the first one holds and is gone")
				_, err = store.Update(ctx, map[string]vault.Change{"h1": func(cur *vault.Record) (*vault.Record, error) {
					cur.ReconciledAt = "2030-01-01T00:00:00Z"
					return cur, nil
				}})
				Expect(err).NotTo(HaveOccurred())
				changed := recordBytes("h1")
				second, err := flaky.RemoveAll(ctx, "h1")
				Expect(err).To(HaveOccurred())
				Expect(second).NotTo(Equal(first))
				Expect(backupsOf("h1")).To(Equal([]string{second, first}))

				By("retrying once Vault is back")
				px.setFault(nil)
				last, err := flaky.RemoveAll(ctx, "h1")
				Expect(err).NotTo(HaveOccurred())
				Expect(last).To(Equal(second))
				Expect(recordBytes("h1")).To(BeEmpty())
				newest := backupsOf("h1")[0]
				Expect(newest).To(Equal(second))
				parts, err := store.Archive.BackupParts(ctx, "h1", newest)
				Expect(err).NotTo(HaveOccurred())
				expectRemovalBackup(parts, allSecrets("h1"))

				Expect(store.Restores.Restore(ctx, "h1", newest)).To(Succeed())
				Expect(secretData("h1")).To(Equal(secrets))
				Expect(recordBytes("h1")).To(Equal(changed))
			})

			It("deletes nothing when the backup fails", func() {
				provision(store, "f1")
				record, secrets := recordBytes("f1"), secretData("f1")
				px := newProxy(srv.Addr, mount)
				flaky := openStore(px.URL(), srv.Token, mount)
				px.setFault(func(w http.ResponseWriter, r *http.Request) bool {
					if r.Method == http.MethodGet || !strings.Contains(r.URL.Path, "/f1/backups/") {
						return false
					}
					w.WriteHeader(http.StatusInternalServerError)
					_, _ = w.Write([]byte(`{"errors":["injected"]}`))
					return true
				})

				_, err := flaky.RemoveAll(ctx, "f1")
				Expect(err).To(MatchError(ContainSubstring("nothing deleted")))
				_, err = flaky.DeleteSecretsBackedUp(ctx, "f1", "f1/bindings/b1")
				Expect(err).To(MatchError(ContainSubstring("nothing deleted")))

				Expect(recordBytes("f1")).To(Equal(record))
				Expect(secretData("f1")).To(Equal(secrets))
				Expect(backupsOf("f1")).To(BeEmpty())
			})

			It("deletes secrets as an unbind does, after a backup that holds them", func() {
				provision(store, "u1")
				secrets := secretData("u1")
				backupID, err := store.DeleteSecretsBackedUp(ctx, "u1", "u1/bindings/b1")
				Expect(err).NotTo(HaveOccurred())
				Expect(secretData("u1")).To(HaveKeyWithValue("bindings/b1", ""))
				Expect(secretData("u1")["bindings/b2"]).To(Equal(secrets["bindings/b2"]))
				Expect(recordBytes("u1")).NotTo(BeEmpty())
				parts, err := store.Archive.BackupParts(ctx, "u1", backupID)
				Expect(err).NotTo(HaveOccurred())
				Expect(parts.Secrets).To(Equal(allSecrets("u1")))
				Expect(parts.Removal).To(BeFalse())

				Expect(store.Restores.Restore(ctx, "u1", backupID)).To(Succeed())
				Expect(secretData("u1")).To(Equal(secrets))
			})

			It("refuses to delete what is not a secret of the instance, deleting nothing", func() {
				provision(store, "x1")
				provision(store, "x2")
				before := []map[string]string{secretData("x1"), secretData("x2")}
				for _, p := range []string{"x2/credentials", "x1/metadata", "x1/manifest", "x1/backups/1700000000",
					"x1/backups", "x1", "x1/../x2/credentials", "db", "blacksmith/index/meta", "x1/", ""} {
					_, err := store.DeleteSecretsBackedUp(ctx, "x1", "x1/bindings/b1", p)
					Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%q: %v", p, err)
				}
				Expect([]map[string]string{secretData("x1"), secretData("x2")}).To(Equal(before))
				Expect(backupsOf("x1")).To(BeEmpty())
				_, err := store.DeleteSecretsBackedUp(ctx, "x1/..", "x1/credentials")
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
			})

			It("restores the secrets a backup names, backs up those it overwrites, and leaves the others alone", func() {
				provision(store, "r1")
				secrets := secretData("r1")
				taken, err := store.BackupAll(ctx, "r1")
				Expect(err).NotTo(HaveOccurred())
				Expect(store.PutSecret(ctx, "r1/credentials", map[string]any{"password": "rotated"})).To(Succeed())
				Expect(store.PutSecret(ctx, "r1/bindings/b3", map[string]any{"app_guid": "app-b3"})).To(Succeed())
				rotated := rawGet(srv, mount, version, "r1/credentials").Data

				rep, err := store.Restores.RestoreReported(ctx, "r1", taken)
				Expect(err).NotTo(HaveOccurred())
				restored := secretData("r1")
				Expect(restored["binding-ids"]).To(Equal(`{"ids":["b1","b2","b3"]}`), "a binding made after the backup stays listed")
				delete(restored, "binding-ids")
				delete(secrets, "binding-ids")
				Expect(restored).To(Equal(secrets))
				Expect(rawGet(srv, mount, version, "r1/bindings/b3").Data).To(Equal(`{"app_guid":"app-b3"}`), "not in the backup: left alone")
				Expect(rep.Bindings).To(ConsistOf(HaveField("Outcome", "kept"), HaveField("Outcome", "kept"),
					And(HaveField("BindingID", "b3"), HaveField("Outcome", "listed"))))

				preRestore := backupsOf("r1")[0]
				Expect(store.Restores.Restore(ctx, "r1", preRestore)).To(Succeed())
				Expect(rawGet(srv, mount, version, "r1/credentials").Data).To(Equal(rotated))
			})

			It("restores a backup without secrets as before, leaving the secrets alone", func() {
				provision(store, "o1")
				plain, err := store.Backup(ctx, "o1")
				Expect(err).NotTo(HaveOccurred())
				parts, err := store.Archive.BackupParts(ctx, "o1", plain)
				Expect(err).NotTo(HaveOccurred())
				Expect(parts.HasSecrets).To(BeFalse())
				Expect(store.PutSecret(ctx, "o1/credentials", map[string]any{"password": "rotated"})).To(Succeed())
				Expect(store.Restores.Restore(ctx, "o1", plain)).To(Succeed())
				Expect(rawGet(srv, mount, version, "o1/credentials").Data).To(Equal(`{"password":"rotated"}`))
			})

			It("refuses a backup whose secrets part cannot be restored, naming it, and changes nothing", func() {
				provision(store, "c1")
				good, err := store.BackupAll(ctx, "c1")
				Expect(err).NotTo(HaveOccurred())
				Expect(store.PutSecret(ctx, "c1/credentials", map[string]any{"password": "rotated"})).To(Succeed())
				var doc map[string]json.RawMessage
				Expect(json.Unmarshal([]byte(rawGet(srv, mount, version, "c1/backups/"+good).Data), &doc)).To(Succeed())
				before, record, backups := secretData("c1"), recordBytes("c1"), backupsOf("c1")
				for i, c := range []struct{ secrets, want string }{
					{`5`, "not an object"},
					{`["c1/credentials"]`, "not an object"},
					{`{"c1/credentials":{"password":"x"},"c1/bindings/b1":"pw"}`, `"c1/bindings/b1"`},
					{`{"c1/bindings/b1":null}`, `"c1/bindings/b1"`},
					{`{"c2/credentials":{"password":"x"}}`, `"c2/credentials"`},
					{`{"c1/metadata":{"password":"x"}}`, `"c1/metadata"`},
					{`{"c1/../c2/credentials":{"password":"x"}}`, `"c1/../c2/credentials"`},
				} {
					doc["secrets"] = json.RawMessage(c.secrets)
					body, _ := json.Marshal(doc)
					name := fmt.Sprint(100 + i) // older than every real backup
					rawPut(srv, mount, version, "c1/backups/"+name, string(body))

					err := store.Restores.Restore(ctx, "c1", name)
					Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
					Expect(err.Error()).To(ContainSubstring("its secrets cannot be restored"))
					Expect(err.Error()).To(ContainSubstring(c.want))
					Expect(err.Error()).To(ContainSubstring(mount + "/c1/backups/" + name))
					Expect(secretData("c1")).To(Equal(before), c.secrets)
					Expect(recordBytes("c1")).To(Equal(record))
					backups = append(backups, name)
					Expect(backupsOf("c1")).To(ConsistOf(backups), "no backup of the current state taken")
				}
			})

			It("refuses to back up an instance with more than 1,000 paths, deleting nothing", func() {
				provision(store, "big")
				for i := range 1000 {
					rawPut(srv, mount, version, fmt.Sprintf("big/bindings/x%04d", i), `{"app_guid":"a"}`)
				}
				_, err := store.BackupAll(ctx, "big")
				Expect(errors.Is(err, vault.ErrTooLarge)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring("more than 1000 paths under " + mount + "/big/"))
				_, err = store.RemoveAll(ctx, "big")
				Expect(errors.Is(err, vault.ErrTooLarge)).To(BeTrue(), "%v", err)
				Expect(secretData("big")["credentials"]).NotTo(BeEmpty())
				Expect(recordBytes("big")).NotTo(BeEmpty())
				Expect(backupsOf("big")).To(BeEmpty())
			})
		})
	}
})

// expectRemovalBackup checks that c is a RemoveAll backup holding the
// record, metadata, manifest and exactly the given secrets.
func expectRemovalBackup(c vault.BackupContents, secrets []string) {
	GinkgoHelper()
	Expect(c.Record && c.Metadata && c.Manifest && c.HasSecrets && c.Removal).To(BeTrue(), "%+v", c)
	Expect(c.Secrets).To(Equal(secrets))
	Expect(c.TakenAt).NotTo(BeEmpty())
}

// withoutLastHistory drops the last history entry of a metadata document.
func withoutLastHistory(data string) string {
	GinkgoHelper()
	var md map[string]json.RawMessage
	Expect(json.Unmarshal([]byte(data), &md)).To(Succeed())
	var h []json.RawMessage
	Expect(json.Unmarshal(md["history"], &h)).To(Succeed())
	md["history"], _ = json.Marshal(h[:len(h)-1])
	out, _ := json.Marshal(md)
	return string(out)
}
