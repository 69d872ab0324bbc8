package vault_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Backups", func() {
	for _, version := range []int{1, 2} {
		Context(fmt.Sprintf("on KV v%d", version), func() {
			var srv *testvault.Server

			BeforeEach(func() { srv = server() })

			// seed gives instance id a record, metadata and manifest.
			seed := func(s *vault.Store, id, plan string) {
				GinkgoHelper()
				_, err := s.Update(ctx, map[string]vault.Change{id: put(rec("svc", plan))})
				Expect(err).NotTo(HaveOccurred())
				md := &vault.Metadata{Releases: []vault.Resource{{Name: "redis", Version: plan}}}
				md.AddHistory(vault.HistoryEntry{Time: "2024-01-01T00:00:00Z", Action: "updated", Detail: plan}, 0)
				Expect(s.Documents.PutMetadata(ctx, id, md)).To(Succeed())
				Expect(s.PutManifest(ctx, id, "plan: "+plan)).To(Succeed())
			}
			backupsOf := func(s *vault.Store, id string) []string {
				GinkgoHelper()
				b, err := s.Backups(ctx, id)
				Expect(err).NotTo(HaveOccurred())
				return b
			}

			It("snapshots record, metadata and manifest under distinct ids, newest first", func() {
				s, mount := newStore(srv, version)
				seed(s, "b1", "small")
				var taken []string
				for range 4 {
					id, err := s.Backup(ctx, "b1")
					Expect(err).NotTo(HaveOccurred())
					taken = append(taken, id)
				}
				Expect(taken).To(HaveLen(4))
				Expect(map[string]bool{taken[0]: true, taken[1]: true, taken[2]: true, taken[3]: true}).To(HaveLen(4))
				Expect(backupsOf(s, "b1")).To(Equal([]string{taken[3], taken[2], taken[1], taken[0]}))

				doc := rawGet(srv, mount, version, "b1/backups/"+taken[0])
				var snap map[string]json.RawMessage
				Expect(json.Unmarshal([]byte(doc.Data), &snap)).To(Succeed())
				Expect(string(snap["record"])).To(ContainSubstring(`"plan_id":"small"`))
				Expect(string(snap["metadata"])).To(ContainSubstring(`"history":[{"action":"updated"`))
				Expect(string(snap["manifest"])).To(Equal(`"plan: small"`))
			})

			It("never lets stores of one process overwrite each other's backups in the same second", func() {
				opts := func(o *vault.Options) {
					o.Backup = &vault.BackupOptions{Enabled: true, Retention: 0, Cleanup: true, Path: "backups"}
				}
				a, mount := newStore(srv, version, opts)
				stores := []*vault.Store{a}
				for range 3 {
					stores = append(stores, openStore(srv.Addr, srv.Token, mount, opts))
				}
				seed(a, "two", "p")
				var (
					wg  sync.WaitGroup
					mu  sync.Mutex
					ids = map[string]int{}
				)
				for _, s := range stores {
					wg.Add(1)
					go func() {
						defer GinkgoRecover()
						defer wg.Done()
						for range 8 {
							id, err := s.Backup(ctx, "two")
							Expect(err).NotTo(HaveOccurred())
							mu.Lock()
							ids[id]++
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				Expect(ids).To(HaveLen(32), "every backup got a name of its own: %v", ids)
				Expect(backupsOf(a, "two")).To(ConsistOf(slices.Collect(maps.Keys(ids))))
			})

			It("says ErrNotFound for an instance with nothing to back up", func() {
				s, _ := newStore(srv, version)
				_, err := s.Backup(ctx, "ghost")
				Expect(errors.Is(err, vault.ErrNotFound)).To(BeTrue(), "%v", err)
			})

			DescribeTable("retention and cleanup",
				func(opts *vault.BackupOptions, take, want int) {
					s, _ := newStore(srv, version, func(o *vault.Options) { o.Backup = opts })
					seed(s, "r", "p")
					var taken []string
					for range take {
						id, err := s.Backup(ctx, "r")
						Expect(err).NotTo(HaveOccurred())
						taken = append(taken, id)
					}
					got := backupsOf(s, "r")
					Expect(got).To(HaveLen(want))
					for i := range want { // the newest are the ones kept
						Expect(got[i]).To(Equal(taken[take-1-i]))
					}
				},
				Entry("retention 3 keeps the newest 3", &vault.BackupOptions{Enabled: true, Retention: 3, Cleanup: true}, 6, 3),
				Entry("retention 0 keeps all", &vault.BackupOptions{Enabled: true, Retention: 0, Cleanup: true}, 6, 6),
				Entry("cleanup off keeps all", &vault.BackupOptions{Enabled: true, Retention: 2, Cleanup: false}, 5, 5),
				Entry("default retention is 10", nil, 12, 10),
			)

			It("takes no backup when backups are off", func() {
				s, _ := newStore(srv, version, func(o *vault.Options) {
					o.Backup = &vault.BackupOptions{} // every key off, no path: off, as given
				})
				seed(s, "off", "p")
				Expect(s.Backup(ctx, "off")).To(BeEmpty())
				Expect(s.Indexes.Remove(ctx, "off")).To(Succeed())
				Expect(backupsOf(s, "off")).To(BeEmpty())
			})

			It("uses the configured backup path", func() {
				s, mount := newStore(srv, version, func(o *vault.Options) {
					o.Backup = &vault.BackupOptions{Enabled: true, Retention: 5, Cleanup: true, Path: "snapshots"}
				})
				seed(s, "bp", "p")
				id, err := s.Backup(ctx, "bp")
				Expect(err).NotTo(HaveOccurred())
				Expect(rawGet(srv, mount, version, "bp/snapshots/"+id).Code).To(Equal(200))
			})

			It("restores a backup after backing up the current state", func() {
				s, _ := newStore(srv, version)
				seed(s, "rs", "small")
				first, err := s.Backup(ctx, "rs")
				Expect(err).NotTo(HaveOccurred())
				seed(s, "rs", "large")

				Expect(s.Restores.Restore(ctx, "rs", first)).To(Succeed())

				r, err := s.Record(ctx, "rs")
				Expect(err).NotTo(HaveOccurred())
				Expect(r.PlanID).To(Equal("small"))
				text, _, err := s.Manifest(ctx, "rs")
				Expect(err).NotTo(HaveOccurred())
				Expect(text).To(Equal("plan: small"))
				md, err := s.Documents.Metadata(ctx, "rs")
				Expect(err).NotTo(HaveOccurred())
				Expect(md.Releases[0].Version).To(Equal("small"))
				Expect(md.History).To(HaveLen(2))
				Expect(md.History[1].Action).To(Equal("restored"))
				Expect(md.History[1].Detail).To(ContainSubstring(first))

				backups := backupsOf(s, "rs")
				Expect(backups).To(HaveLen(2))
				Expect(s.Restores.Restore(ctx, "rs", backups[0])).To(Succeed(), "the pre-restore backup holds the large plan")
				r, _ = s.Record(ctx, "rs")
				Expect(r.PlanID).To(Equal("large"))
			})

			It("restores an absent part by removing it", func() {
				s, _ := newStore(srv, version)
				_, err := s.Update(ctx, map[string]vault.Change{"ra": put(rec("svc", "p"))})
				Expect(err).NotTo(HaveOccurred())
				first, err := s.Backup(ctx, "ra")
				Expect(err).NotTo(HaveOccurred())
				Expect(s.PutManifest(ctx, "ra", "later")).To(Succeed())
				Expect(s.Restores.Restore(ctx, "ra", first)).To(Succeed())
				_, ok, err := s.Manifest(ctx, "ra")
				Expect(err).NotTo(HaveOccurred())
				Expect(ok).To(BeFalse())
				Expect(s.Record(ctx, "ra")).NotTo(BeNil())
			})

			It("refuses a backup with a part it cannot restore, changing nothing", func() {
				s, mount := newStore(srv, version)
				seed(s, "rc", "small")
				good, err := s.Backup(ctx, "rc")
				Expect(err).NotTo(HaveOccurred())
				seed(s, "rc", "large")
				var snap map[string]json.RawMessage
				Expect(json.Unmarshal([]byte(rawGet(srv, mount, version, "rc/backups/"+good).Data), &snap)).To(Succeed())
				state := func() []stored {
					return []stored{rawGet(srv, mount, version, "rc/metadata"), rawGet(srv, mount, version, "rc/manifest"),
						rawGet(srv, mount, version, vault.ShardPath(vault.ShardOf("rc", vault.DefaultShards)))}
				}
				before, backups := state(), backupsOf(s, "rc")
				for i, part := range []string{"metadata", "manifest", "record"} {
					bad := maps.Clone(snap)
					bad[part] = json.RawMessage(`5`)
					body, _ := json.Marshal(bad)
					name := fmt.Sprint(100 + i) // older than every real backup
					rawPut(srv, mount, version, "rc/backups/"+name, string(body))

					err := s.Restores.Restore(ctx, "rc", name)
					Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%v", err)
					Expect(err.Error()).To(ContainSubstring("its " + part + " cannot be restored"))
					Expect(err.Error()).To(ContainSubstring(mount + "/rc/backups/" + name))
					Expect(state()).To(Equal(before), part)
					backups = append(backups, name)
					Expect(backupsOf(s, "rc")).To(ConsistOf(backups), "no backup of the current state taken")
				}
			})

			It("refuses an unknown or malformed backup id", func() {
				s, _ := newStore(srv, version)
				seed(s, "rx", "p")
				Expect(errors.Is(s.Restores.Restore(ctx, "rx", "123"), vault.ErrNotFound)).To(BeTrue())
				Expect(errors.Is(s.Restores.Restore(ctx, "rx", "../db"), vault.ErrInvalid)).To(BeTrue())
			})
		})
	}
})
