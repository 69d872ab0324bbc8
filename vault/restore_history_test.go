package vault_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Restore and history", func() {
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

			// addHistory appends an entry to id's metadata history, as the
			// reconciler does.
			addHistory := func(id, action string) {
				GinkgoHelper()
				md, err := store.Documents.Metadata(ctx, id)
				Expect(err).NotTo(HaveOccurred())
				if md == nil {
					md = &vault.Metadata{}
				}
				md.AddHistory(vault.HistoryEntry{Time: "2026-11-23T13:20:00Z", Action: action}, 0)
				Expect(store.Documents.PutMetadata(ctx, id, md)).To(Succeed())
			}
			actions := func(id string) []string {
				GinkgoHelper()
				md, err := store.Documents.Metadata(ctx, id)
				Expect(err).NotTo(HaveOccurred())
				var out []string
				for _, h := range md.History {
					out = append(out, h.Action)
				}
				return out
			}

			It("keeps the history written after the backup", func() {
				_, err := store.Update(ctx, map[string]vault.Change{"rh": put(rec("svc", "small"))})
				Expect(err).NotTo(HaveOccurred())
				Expect(store.Documents.PutMetadata(ctx, "rh", &vault.Metadata{Releases: []vault.Resource{{Name: "redis", Version: "1"}}})).To(Succeed())
				addHistory("rh", "created")
				backup, err := store.Backup(ctx, "rh")
				Expect(err).NotTo(HaveOccurred())

				md, err := store.Documents.Metadata(ctx, "rh")
				Expect(err).NotTo(HaveOccurred())
				md.Releases[0].Version = "2"
				Expect(store.Documents.PutMetadata(ctx, "rh", md)).To(Succeed())
				addHistory("rh", "updated")
				addHistory("rh", "drift")

				Expect(store.Restores.Restore(ctx, "rh", backup)).To(Succeed())
				md, err = store.Documents.Metadata(ctx, "rh")
				Expect(err).NotTo(HaveOccurred())
				Expect(md.Releases[0].Version).To(Equal("1"), "the rest of the metadata is the backup's")
				Expect(actions("rh")).To(Equal([]string{"created", "updated", "drift", "restored"}))
				Expect(md.History[3].Detail).To(Equal("from backup " + backup))

				By("recording a restored event with the backups in the instance's history")
				events, err := store.Events(ctx, "rh", 0)
				Expect(err).NotTo(HaveOccurred())
				Expect(events).To(HaveLen(1))
				Expect(events[0].Kind).To(Equal("restored"))
				Expect(events[0].Actor).To(Equal("operator"))
				Expect(events[0].Details).To(HaveKeyWithValue("backup", backup))
				saved, err := store.Backups(ctx, "rh")
				Expect(err).NotTo(HaveOccurred())
				Expect(events[0].Details).To(HaveKeyWithValue("previous_state_backup", saved[0]))

				By("leaving the event history alone on a second restore")
				Expect(store.Restores.Restore(ctx, "rh", saved[0])).To(Succeed())
				Expect(actions("rh")).To(Equal([]string{"created", "updated", "drift", "restored", "restored"}))
				Expect(store.Events(ctx, "rh", 0)).To(HaveLen(2))
			})

			It("keeps the current history when the backup has no metadata, and the backup's when there is none now", func() {
				_, err := store.Update(ctx, map[string]vault.Change{"rn": put(rec("svc", "p"))})
				Expect(err).NotTo(HaveOccurred())
				bare, err := store.Backup(ctx, "rn")
				Expect(err).NotTo(HaveOccurred())
				addHistory("rn", "created")
				Expect(store.Restores.Restore(ctx, "rn", bare)).To(Succeed())
				Expect(actions("rn")).To(Equal([]string{"created", "restored"}))

				withHistory, err := store.Backup(ctx, "rn")
				Expect(err).NotTo(HaveOccurred())
				code, _, err := srv.Do(http.MethodDelete, "/v1/"+mount+map[int]string{1: "/", 2: "/metadata/"}[version]+"rn/metadata", "")
				Expect(err).NotTo(HaveOccurred())
				Expect(code).To(Equal(http.StatusNoContent))
				Expect(store.Restores.Restore(ctx, "rn", withHistory)).To(Succeed())
				Expect(actions("rn")).To(Equal([]string{"created", "restored", "restored"}))
			})

			It("says the restore happened when only its event could not be recorded", func() {
				_, err := store.Update(ctx, map[string]vault.Change{"rf": put(rec("svc", "small"))})
				Expect(err).NotTo(HaveOccurred())
				backup, err := store.Backup(ctx, "rf")
				Expect(err).NotTo(HaveOccurred())
				_, err = store.Update(ctx, map[string]vault.Change{"rf": put(rec("svc", "large"))})
				Expect(err).NotTo(HaveOccurred())

				px := newProxy(srv.Addr, mount)
				flaky := openStore(px.URL(), srv.Token, mount)
				px.setFault(func(w http.ResponseWriter, r *http.Request) bool {
					if r.Method == http.MethodGet || !strings.Contains(r.URL.Path, "/blacksmith/history/") {
						return false
					}
					w.WriteHeader(http.StatusInternalServerError)
					_, _ = w.Write([]byte(`{"errors":["injected"]}`))
					return true
				})
				err = flaky.Restores.Restore(ctx, "rf", backup)
				Expect(errors.Is(err, vault.ErrEventNotRecorded)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring("injected"))
				r, err := store.Record(ctx, "rf")
				Expect(err).NotTo(HaveOccurred())
				Expect(r.PlanID).To(Equal("small"), "restored all the same")
				Expect(store.Events(ctx, "rf", 0)).To(BeEmpty())
			})
		})
	}
})
