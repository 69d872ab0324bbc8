package vault_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Store round trips", func() {
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

			It("detects the KV version from the mount", func() {
				Expect(store.KVVersion()).To(Equal(version))
			})

			It("reads an empty index before anything is written", func() {
				idx, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(idx.Records).To(BeEmpty())
				r, err := store.Record(ctx, "nope")
				Expect(err).NotTo(HaveOccurred())
				Expect(r).To(BeNil())
			})

			It("writes, reads and lists index records", func() {
				full := &vault.Record{
					ServiceID: "redis", PlanID: "small", DeploymentName: "small-i1", Created: 1700000000,
					OrganizationGUID: "org", SpaceGUID: "space",
					Parameters:    map[string]any{"size": json.Number("3"), "tls": true},
					LastOperation: &vault.Operation{Type: "provision", State: "succeeded", TaskID: 7, StartedAt: "2024-01-01T00:00:00Z"},
					ReconciledAt:  "2024-01-02T00:00:00Z", Orphaned: true, OrphanedAt: "2024-01-03T00:00:00Z",
					Fingerprint: "sha256:abc",
					Extra:       map[string]json.RawMessage{"status": json.RawMessage(`"provisioning_completed"`)},
				}
				res, err := store.Update(ctx, map[string]vault.Change{"i1": put(full), "i2": put(rec("pg", "big"))})
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Changed).To(Equal([]string{"i1", "i2"}))

				got, err := store.Record(ctx, "i1")
				Expect(err).NotTo(HaveOccurred())
				want, _ := json.Marshal(full)
				gotJSON, _ := json.Marshal(got)
				Expect(string(gotJSON)).To(Equal(string(want)))
				Expect(got.LastOperation.TaskID).To(Equal(7))

				idx, err := store.Index(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(idx.Problems).To(BeEmpty())
				Expect(idx.Records).To(HaveLen(2))
				Expect(idx.Records["i2"].PlanID).To(Equal("big"))
			})

			It("keeps fields it does not know on every write", func() {
				id := "keep-1"
				shard := vault.ShardPath(vault.ShardOf(id, vault.DefaultShards))
				_, err := store.Update(ctx, map[string]vault.Change{"other": put(rec("s", "p"))}) // creates the layout
				Expect(err).NotTo(HaveOccurred())
				foreign := `{"created_at":"2024-01-01T00:00:00Z","plan":{"id":"p","name":"Small"},"plan_id":"p","service_id":"s","status":"provisioning_started"}`
				rawPut(srv, mount, version, shard, `{"`+id+`":`+foreign+`}`)

				_, err = store.Update(ctx, map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
					Expect(cur).NotTo(BeNil())
					cur.ReconciledAt = "2024-02-01T00:00:00Z"
					return cur, nil
				}})
				Expect(err).NotTo(HaveOccurred())
				var entries map[string]json.RawMessage
				Expect(json.Unmarshal([]byte(rawGet(srv, mount, version, shard).Data), &entries)).To(Succeed())
				Expect(string(entries[id])).To(Equal(`{"created_at":"2024-01-01T00:00:00Z","plan":{"id":"p","name":"Small"},"plan_id":"p",` +
					`"reconciled_at":"2024-02-01T00:00:00Z","service_id":"s","status":"provisioning_started"}`))
			})

			It("issues no write when a change leaves the record as it is", func() {
				_, err := store.Update(ctx, map[string]vault.Change{"a": put(rec("s", "p")), "b": put(rec("s", "q"))})
				Expect(err).NotTo(HaveOccurred())
				before := store.Stats().Writes
				same := func(cur *vault.Record) (*vault.Record, error) { return cur, nil }
				none := func(*vault.Record) (*vault.Record, error) { return nil, nil }
				res, err := store.Update(ctx, map[string]vault.Change{"a": same, "b": put(rec("s", "q")), "c": none})
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Writes).To(BeZero())
				Expect(res.Changed).To(BeEmpty())
				Expect(store.Stats().Writes).To(Equal(before))
			})

			It("writes many changes in at most one write per shard", func() {
				changes := map[string]vault.Change{}
				for i := range 1000 {
					changes[fmt.Sprintf("batch-%d", i)] = put(rec("s", "p"))
				}
				res, err := store.Update(ctx, changes)
				Expect(err).NotTo(HaveOccurred())
				Expect(res.Changed).To(HaveLen(1000))
				Expect(res.Writes).To(BeNumerically("<=", vault.DefaultShards))
			})

			It("writes nothing when a change fails", func() {
				_, err := store.Update(ctx, map[string]vault.Change{"a": put(rec("s", "p"))})
				Expect(err).NotTo(HaveOccurred())
				before := indexState(srv, mount, version)
				boom := errors.New("boom")
				changes := map[string]vault.Change{"bad": func(*vault.Record) (*vault.Record, error) { return nil, boom }}
				for i := range 50 {
					changes[fmt.Sprintf("good-%d", i)] = put(rec("s", "p"))
				}
				res, err := store.Update(ctx, changes)
				Expect(err).To(MatchError(boom))
				Expect(res.Writes).To(BeZero())
				Expect(indexState(srv, mount, version)).To(Equal(before))
			})

			It("round-trips metadata, keeping unknown fields and capping history", func() {
				Expect(store.Documents.Metadata(ctx, "m1")).To(BeNil())
				rawPut(srv, mount, version, "m1/metadata", `{"legacy_field":{"a":[1,2]},"releases":[{"name":"redis","version":"1","url":"x"}]}`)
				md, err := store.Documents.Metadata(ctx, "m1")
				Expect(err).NotTo(HaveOccurred())
				md.Stemcells = []vault.Resource{{Name: "ubuntu-jammy", Version: "1.1"}}
				md.VMs = []vault.VMSummary{{ID: "vm-1", Job: "redis", Index: 0, AZ: "z1", IPs: []string{"10.0.0.1"}}}
				md.Properties = map[string]any{"port": json.Number("6379")}
				for i := range 60 {
					md.AddHistory(vault.HistoryEntry{Time: "2024-01-01T00:00:00Z", Action: "updated", Detail: fmt.Sprint(i)}, 0)
				}
				Expect(store.Documents.PutMetadata(ctx, "m1", md)).To(Succeed())

				got, err := store.Documents.Metadata(ctx, "m1")
				Expect(err).NotTo(HaveOccurred())
				Expect(got.History).To(HaveLen(50))
				Expect(got.History[0].Detail).To(Equal("10"))
				Expect(got.History[49].Detail).To(Equal("59"))
				Expect(got.VMs[0].IPs).To(Equal([]string{"10.0.0.1"}))
				Expect(string(got.Extra["legacy_field"])).To(Equal(`{"a":[1,2]}`))
				Expect(string(got.Releases[0].Extra["url"])).To(Equal(`"x"`))
			})

			It("reports metadata with a mistyped field as corrupt, naming its path", func() {
				rawPut(srv, mount, version, "m2/metadata", `{"history":"not a list"}`)
				_, err := store.Documents.Metadata(ctx, "m2")
				Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring(mount + "/m2/metadata"))
			})

			It("round-trips manifests, keeping other keys", func() {
				_, ok, err := store.Manifest(ctx, "m3")
				Expect(err).NotTo(HaveOccurred())
				Expect(ok).To(BeFalse())
				rawPut(srv, mount, version, "m3/manifest", `{"manifest":"old","note":"kept"}`)
				Expect(store.PutManifest(ctx, "m3", "name: m3\n# <&>\n")).To(Succeed())
				text, ok, err := store.Manifest(ctx, "m3")
				Expect(err).NotTo(HaveOccurred())
				Expect(ok).To(BeTrue())
				Expect(text).To(Equal("name: m3\n# <&>\n"))
				Expect(rawGet(srv, mount, version, "m3/manifest").Data).To(ContainSubstring(`"note":"kept"`))

				err = store.PutManifest(ctx, "m3", strings.Repeat("x", 1<<20+1))
				Expect(errors.Is(err, vault.ErrTooLarge)).To(BeTrue())
			})

			It("round-trips secrets and refuses the index paths", func() {
				data := map[string]any{"password": "pw", "port": json.Number("5432"), "nested": map[string]any{"a": "b"}}
				Expect(store.PutSecret(ctx, "s1/bindings/b1", data)).To(Succeed())
				got, ok, err := store.Secret(ctx, "s1/bindings/b1")
				Expect(err).NotTo(HaveOccurred())
				Expect(ok).To(BeTrue())
				Expect(got).To(Equal(data))
				Expect(store.Secrets.DeleteSecret(ctx, "s1/bindings/b1")).To(Succeed())
				_, ok, err = store.Secret(ctx, "s1/bindings/b1")
				Expect(err).NotTo(HaveOccurred())
				Expect(ok).To(BeFalse())
				Expect(store.Secrets.DeleteSecret(ctx, "s1/bindings/b1")).To(Succeed())

				for _, p := range []string{"db", "blacksmith/index/meta", "blacksmith/index/v1/shards/000", "../x", "/x", "a//b", "", "a/\nb"} {
					Expect(errors.Is(store.PutSecret(ctx, p, data), vault.ErrInvalid)).To(BeTrue(), p)
				}
			})

			It("removes an index entry after backing the instance up", func() {
				_, err := store.Update(ctx, map[string]vault.Change{"r1": put(rec("s", "p")), "r2": put(rec("s", "p"))})
				Expect(err).NotTo(HaveOccurred())
				Expect(store.PutManifest(ctx, "r1", "name: r1")).To(Succeed())
				Expect(store.Indexes.Remove(ctx, "r1")).To(Succeed())
				Expect(store.Record(ctx, "r1")).To(BeNil())
				Expect(store.Record(ctx, "r2")).NotTo(BeNil())
				_, ok, _ := store.Manifest(ctx, "r1")
				Expect(ok).To(BeTrue(), "per-instance paths are kept")
				backups, err := store.Backups(ctx, "r1")
				Expect(err).NotTo(HaveOccurred())
				Expect(backups).To(HaveLen(1))
				Expect(store.Indexes.Remove(ctx, "never-there")).To(Succeed())
			})

			It("rejects ids that cannot name a path", func() {
				for _, id := range []string{"", "a/b", "..", " x", "a\nb", "a\x7fb", "\xff"} {
					_, err := store.Update(ctx, map[string]vault.Change{id: put(rec("s", "p"))})
					Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), id)
				}
			})
		})
	}
})

var _ = Describe("the write counts by kind of document", func() {
	It("count each write under its kind, and add up to the writes", func(ctx SpecContext) {
		store, _ := newStore(server(), 2)
		id := "inst-kinds"
		_, err := store.Update(ctx, map[string]vault.Change{id: func(*vault.Record) (*vault.Record, error) {
			return &vault.Record{ServiceID: "redis", PlanID: "small"}, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(store.PutManifest(ctx, id, "name: x\n")).To(Succeed())
		Expect(store.Documents.PutMetadata(ctx, id, &vault.Metadata{})).To(Succeed())
		Expect(store.PutSecret(ctx, id+"/credentials", map[string]any{"password": "p"})).To(Succeed())
		_, err = store.Backup(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		Expect(store.AppendEvent(ctx, id, vault.Event{Kind: "created"})).To(Succeed())
		Expect(store.RunLog.AppendRun(ctx, vault.RunEntry{ID: "run-1"})).To(Succeed())
		Expect(store.State.WriteState(ctx, "kinds", map[string]int{"a": 1})).To(Succeed())

		st := store.Stats()
		Expect(st.WritesByKind).To(HaveKeyWithValue("instance", uint64(2)))
		Expect(st.WritesByKind).To(HaveKeyWithValue("secret", uint64(1)))
		Expect(st.WritesByKind).To(HaveKeyWithValue("backup", BeNumerically(">=", 1)))
		Expect(st.WritesByKind).To(HaveKeyWithValue("history", uint64(1)))
		Expect(st.WritesByKind).To(HaveKeyWithValue("runlog", uint64(1)))
		Expect(st.WritesByKind).To(HaveKeyWithValue("state", uint64(1)))
		Expect(st.WritesByKind).To(HaveKeyWithValue("index", BeNumerically(">=", 2)), "the layout and a shard")
		var sum uint64
		for _, n := range st.WritesByKind {
			sum += n
		}
		Expect(sum).To(Equal(st.Writes))
	})
})
