package vault_test

import (
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("Instances and CreateManifest", func() {
	for _, version := range []int{1, 2} {
		Context(fmt.Sprintf("on KV v%d", version), func() {
			var store *vault.Store

			BeforeEach(func() {
				store, _ = newStore(server(), version)
			})

			It("lists the ids that have documents of their own, not the index or the legacy db", func() {
				Expect(store.PutManifest(ctx, "i-manifest", "name: a\n")).To(Succeed())
				Expect(store.Documents.PutMetadata(ctx, "i-meta", &vault.Metadata{Releases: []vault.Resource{{Name: "redis", Version: "1"}}})).To(Succeed())
				Expect(store.PutSecret(ctx, "i-secret/credentials", map[string]any{"password": "x"})).To(Succeed())
				_, err := store.Update(ctx, map[string]vault.Change{"i-index-only": put(rec("s", "p"))})
				Expect(err).NotTo(HaveOccurred())

				ids, err := store.Documents.Instances(ctx)
				Expect(err).NotTo(HaveOccurred())
				Expect(ids).To(Equal(map[string]bool{"i-manifest": true, "i-meta": true, "i-secret": true}))
			})

			It("refuses the ids whose folder is the package's own or the legacy index, before any write", func() {
				writes := store.Stats().Writes
				for _, id := range []string{"blacksmith", "db"} {
					Expect(store.PutManifest(ctx, id, "name: x\n")).To(MatchError(ContainSubstring("is reserved")))
					_, err := store.RemoveAll(ctx, id)
					Expect(err).To(MatchError(vault.ErrInvalid))
					Expect(store.AppendEvent(ctx, id, vault.Event{Kind: "created"})).To(MatchError(vault.ErrInvalid))
				}
				Expect(store.Stats().Writes).To(Equal(writes))
			})

			It("refuses an empty metadata document on KV v1 with an error that says so", func() {
				err := store.Documents.PutMetadata(ctx, "empty", &vault.Metadata{})
				if version == 1 {
					Expect(err).To(MatchError(vault.ErrInvalid))
					Expect(err.Error()).To(ContainSubstring("cannot store an empty document"))
				} else {
					Expect(err).NotTo(HaveOccurred())
				}
			})

			It("creates a manifest that is absent, and refuses to overwrite one that exists on KV v2", func() {
				Expect(store.Documents.CreateManifest(ctx, "c1", "name: first\n")).To(Succeed())
				text, ok, err := store.Manifest(ctx, "c1")
				Expect(err).NotTo(HaveOccurred())
				Expect(ok).To(BeTrue())
				Expect(text).To(Equal("name: first\n"))

				Expect(store.Documents.CreateManifest(ctx, "c2", strings.Repeat("x", 1<<20+1))).To(MatchError(vault.ErrTooLarge))
				Expect(store.Documents.CreateManifest(ctx, "a/b", "name: x\n")).To(MatchError(vault.ErrInvalid))

				err = store.Documents.CreateManifest(ctx, "c1", "name: second\n")
				if version == 2 {
					Expect(err).To(MatchError(vault.ErrConflict))
					text, _, _ = store.Manifest(ctx, "c1")
					Expect(text).To(Equal("name: first\n"))
				} else { // KV v1 has no check-and-set: it is PutManifest
					Expect(err).NotTo(HaveOccurred())
					text, _, _ = store.Manifest(ctx, "c1")
					Expect(text).To(Equal("name: second\n"))
				}
			})
		})
	}
})
