package vault_test

import (
	"encoding/json"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// What a run reads of an instance it changes is what it writes over and
// what its backup holds: no part is read twice.
var _ = Describe("ReadManifest, ReplaceManifest and BackupFrom", func() {
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

			readBoth := func(id string) vault.InstanceDocs {
				GinkgoHelper()
				md, err := store.Documents.Metadata(ctx, id)
				Expect(err).NotTo(HaveOccurred())
				mf, err := store.Documents.ReadManifest(ctx, id)
				Expect(err).NotTo(HaveOccurred())
				return vault.InstanceDocs{Metadata: md, Manifest: mf}
			}
			snapshot := func(id, backup string) map[string]json.RawMessage {
				GinkgoHelper()
				doc := rawGet(srv, mount, version, id+"/backups/"+backup)
				Expect(doc.Code).To(Equal(200))
				var snap map[string]json.RawMessage
				Expect(json.Unmarshal([]byte(doc.Data), &snap)).To(Succeed())
				delete(snap, "taken_at")
				return snap
			}

			It("writes over the document read, keeping its other keys; an absent one is created", func() {
				rawPut(srv, mount, version, "r1/manifest", `{"manifest":"name: old\n","note":"kept"}`)
				mf, err := store.Documents.ReadManifest(ctx, "r1")
				Expect(err).NotTo(HaveOccurred())
				Expect(mf.Exists).To(BeTrue())
				Expect(mf.Text).To(Equal("name: old\n"))
				Expect(store.Documents.ReplaceManifest(ctx, "r1", "name: new\n", mf)).To(Succeed())
				Expect(rawGet(srv, mount, version, "r1/manifest").Data).To(MatchJSON(`{"manifest":"name: new\n","note":"kept"}`))

				none, err := store.Documents.ReadManifest(ctx, "r2")
				Expect(err).NotTo(HaveOccurred())
				Expect(none.Exists).To(BeFalse())
				Expect(store.Documents.ReplaceManifest(ctx, "r2", "name: r2\n", none)).To(Succeed())
				Expect(rawGet(srv, mount, version, "r2/manifest").Data).To(MatchJSON(`{"manifest":"name: r2\n"}`))
			})

			It("refuses what it cannot write, writing nothing", func() {
				mf, err := store.Documents.ReadManifest(ctx, "r3")
				Expect(err).NotTo(HaveOccurred())
				writes := store.Stats().Writes
				Expect(store.Documents.ReplaceManifest(ctx, "r3", strings.Repeat("x", 1<<20+1), mf)).To(MatchError(vault.ErrTooLarge))
				Expect(store.Documents.ReplaceManifest(ctx, "r3", "name: r3\n", nil)).To(MatchError(vault.ErrInvalid))
				Expect(store.Documents.ReplaceManifest(ctx, "a/b", "name: r3\n", mf)).To(MatchError(vault.ErrInvalid))
				_, err = store.Documents.ReadManifest(ctx, "a/b")
				Expect(err).To(MatchError(vault.ErrInvalid))
				Expect(store.Stats().Writes).To(Equal(writes))

				rawPut(srv, mount, version, "r4/manifest", `{"manifest":42}`)
				_, err = store.Documents.ReadManifest(ctx, "r4")
				Expect(err).To(MatchError(vault.ErrCorrupt))
				Expect(err.Error()).To(ContainSubstring(`key "manifest" is not a string`))
			})

			if version == 2 {
				It("leaves a document another writer changed since it was read, with a conflict (created or replaced)", func() {
					Expect(store.PutManifest(ctx, "c1", "name: one\n")).To(Succeed())
					mf, err := store.Documents.ReadManifest(ctx, "c1")
					Expect(err).NotTo(HaveOccurred())
					absent, err := store.Documents.ReadManifest(ctx, "c2")
					Expect(err).NotTo(HaveOccurred())

					Expect(store.PutManifest(ctx, "c1", "name: theirs\n")).To(Succeed())
					Expect(store.PutManifest(ctx, "c2", "name: theirs\n")).To(Succeed())
					Expect(store.Documents.ReplaceManifest(ctx, "c1", "name: ours\n", mf)).To(MatchError(vault.ErrConflict))
					Expect(store.Documents.ReplaceManifest(ctx, "c2", "name: ours\n", absent)).To(MatchError(vault.ErrConflict))
					for _, id := range []string{"c1", "c2"} {
						text, _, err := store.Manifest(ctx, id)
						Expect(err).NotTo(HaveOccurred())
						Expect(text).To(Equal("name: theirs\n"), id)
					}
				})
			}

			It("backs up from what was read: the backup Backup takes, without reading the documents again", func() {
				_, err := store.Update(ctx, map[string]vault.Change{"b1": put(rec("svc", "small"))})
				Expect(err).NotTo(HaveOccurred())
				md := &vault.Metadata{Releases: []vault.Resource{{Name: "redis", Version: "1"}}}
				md.AddHistory(vault.HistoryEntry{Time: "2024-01-01T00:00:00Z", Action: "updated", Detail: "d"}, 0)
				Expect(store.Documents.PutMetadata(ctx, "b1", md)).To(Succeed())
				rawPut(srv, mount, version, "b1/manifest", `{"manifest":"name: b1\n","note":"kept"}`)

				taken, err := store.Backup(ctx, "b1")
				Expect(err).NotTo(HaveOccurred())
				docs := readBoth("b1")
				reads := store.Stats().Reads
				from, err := store.Archive.BackupFrom(ctx, "b1", docs)
				Expect(err).NotTo(HaveOccurred())
				// the layout, the record's shard and the listing of the backups
				Expect(store.Stats().Reads - reads).To(Equal(uint64(3)))
				Expect(from).NotTo(Equal(taken))
				Expect(snapshot("b1", from)).To(Equal(snapshot("b1", taken)))

				// With the record as the caller read it, only the backups are listed.
				docs.Record, err = store.Record(ctx, "b1")
				Expect(err).NotTo(HaveOccurred())
				reads = store.Stats().Reads
				from, err = store.Archive.BackupFrom(ctx, "b1", docs)
				Expect(err).NotTo(HaveOccurred())
				Expect(store.Stats().Reads - reads).To(Equal(uint64(1)))
				Expect(snapshot("b1", from)).To(Equal(snapshot("b1", taken)))
				docs.Record = nil

				// Metadata not read (none at the time) and a manifest read absent.
				_, err = store.Update(ctx, map[string]vault.Change{"b2": put(rec("svc", "small"))})
				Expect(err).NotTo(HaveOccurred())
				docs = readBoth("b2")
				Expect(docs.Metadata).To(BeNil())
				from, err = store.Archive.BackupFrom(ctx, "b2", docs)
				Expect(err).NotTo(HaveOccurred())
				snap := snapshot("b2", from)
				Expect(snap).To(HaveKey("record"))
				Expect(snap).NotTo(HaveKey("metadata"))
				Expect(snap).NotTo(HaveKey("manifest"))

				// Metadata made, not read, is read; docs without the manifest are not used.
				from, err = store.Archive.BackupFrom(ctx, "b1", vault.InstanceDocs{Metadata: md, Manifest: docs.Manifest})
				Expect(err).NotTo(HaveOccurred())
				Expect(snapshot("b1", from)["metadata"]).To(Equal(snapshot("b1", taken)["metadata"]))
				from, err = store.Archive.BackupFrom(ctx, "b1", vault.InstanceDocs{})
				Expect(err).NotTo(HaveOccurred())
				Expect(snapshot("b1", from)).To(Equal(snapshot("b1", taken)))

				_, err = store.Archive.BackupFrom(ctx, "b3", vault.InstanceDocs{Manifest: &vault.ManifestDoc{}})
				Expect(err).To(MatchError(vault.ErrNotFound))
			})

			It("finds a record whose index another store re-sharded since this one read its layout", func() {
				ids := idsInShards("g", 6, vault.DefaultShards)
				changes := map[string]vault.Change{}
				for _, id := range ids {
					changes[id] = put(rec("svc", "p-"+id))
				}
				_, err := store.Update(ctx, changes)
				Expect(err).NotTo(HaveOccurred())
				got, err := store.Record(ctx, ids[0]) // reads the layout: 128 shards
				Expect(err).NotTo(HaveOccurred())
				Expect(got.PlanID).To(Equal("p-" + ids[0]))

				other := openStore(srv.Addr, srv.Token, mount)
				_, err = other.Indexes.Reshard(ctx, 2*vault.DefaultShards)
				Expect(err).NotTo(HaveOccurred())
				for _, id := range ids {
					got, err := store.Record(ctx, id)
					Expect(err).NotTo(HaveOccurred())
					Expect(got.PlanID).To(Equal("p-"+id), id)
				}
				// and again, now that it read the new layout
				got, err = store.Record(ctx, ids[1])
				Expect(err).NotTo(HaveOccurred())
				Expect(got.PlanID).To(Equal("p-" + ids[1]))
			})
		})
	}
})
