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

// sized returns a record whose JSON encoding is exactly n bytes.
func sized(n int) *vault.Record {
	GinkgoHelper()
	r := &vault.Record{ServiceID: "s", PlanID: "p", DeploymentName: "x"}
	b, err := json.Marshal(r)
	Expect(err).NotTo(HaveOccurred())
	r.DeploymentName = strings.Repeat("x", n-len(b)+1)
	b, _ = json.Marshal(r)
	Expect(b).To(HaveLen(n))
	return r
}

var _ = Describe("Size bounds", func() {
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

			It("refuses a record over 32 KiB before any write, naming it, and leaves the shards unchanged", func() {
				ids := idsInShards("big", 40, vault.DefaultShards)
				_, err := store.Update(ctx, touchAllWith(ids, "p"))
				Expect(err).NotTo(HaveOccurred())
				before := indexState(srv, mount, version)

				changes := touchAllWith(ids, "q") // every other shard would be written
				changes[ids[0]] = put(sized(vault.DefaultMaxRecordBytes + 1))
				res, err := store.Update(ctx, changes)
				Expect(errors.Is(err, vault.ErrTooLarge)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring("nothing written"))
				Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("record of %s is %d bytes", ids[0], vault.DefaultMaxRecordBytes+1)))
				Expect(err.Error()).To(ContainSubstring("limit 32768"))
				Expect(res.Writes).To(BeZero())
				Expect(indexState(srv, mount, version)).To(Equal(before))
			})

			It("writes a record of exactly the bound", func() {
				r := sized(vault.DefaultMaxRecordBytes)
				_, err := store.Update(ctx, map[string]vault.Change{"edge": put(r)})
				Expect(err).NotTo(HaveOccurred())
				got, err := store.Record(ctx, "edge")
				Expect(err).NotTo(HaveOccurred())
				Expect(got.DeploymentName).To(Equal(r.DeploymentName))
			})

			It("applies a configured record bound, and refuses to restore a backup over it", func() {
				_, err := store.Update(ctx, map[string]vault.Change{"rb": put(sized(200))})
				Expect(err).NotTo(HaveOccurred())
				backup, err := store.Backup(ctx, "rb")
				Expect(err).NotTo(HaveOccurred())
				small := openStore(srv.Addr, srv.Token, mount, func(o *vault.Options) { o.MaxRecordBytes = 199 })
				_, err = small.Update(ctx, map[string]vault.Change{"rb2": put(sized(200))})
				Expect(errors.Is(err, vault.ErrTooLarge)).To(BeTrue(), "%v", err)
				_, err = small.Update(ctx, map[string]vault.Change{"rb2": put(sized(199))})
				Expect(err).NotTo(HaveOccurred())

				Expect(store.PutManifest(ctx, "rb", "changed")).To(Succeed())
				err = small.Restores.Restore(ctx, "rb", backup)
				Expect(errors.Is(err, vault.ErrTooLarge)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring("its record is 200 bytes"))
				text, _, _ := store.Manifest(ctx, "rb")
				Expect(text).To(Equal("changed"), "nothing restored")
			})

			It("refuses a manifest over the bound before writing it", func() {
				s := openStore(srv.Addr, srv.Token, mount, func(o *vault.Options) { o.MaxManifestBytes = 100 })
				Expect(s.PutManifest(ctx, "mb", strings.Repeat("a", 100))).To(Succeed())
				err := s.PutManifest(ctx, "mb", strings.Repeat("b", 101))
				Expect(errors.Is(err, vault.ErrTooLarge)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring("manifest of mb is 101 bytes"))
				Expect(s.Documents.CreateManifest(ctx, "mb2", strings.Repeat("b", 101))).To(MatchError(vault.ErrTooLarge))
				text, _, _ := s.Manifest(ctx, "mb")
				Expect(text).To(Equal(strings.Repeat("a", 100)))
			})

			It("refuses a secret over 256 KiB before writing it, and writes one of exactly the bound", func() {
				// {"k":"..."} is 8 bytes around the value.
				at := map[string]any{"k": strings.Repeat("a", vault.DefaultMaxSecretBytes-8)}
				Expect(store.PutSecret(ctx, "sb/credentials", at)).To(Succeed())
				over := map[string]any{"k": strings.Repeat("b", vault.DefaultMaxSecretBytes-7)}
				err := store.PutSecret(ctx, "sb/credentials", over)
				Expect(errors.Is(err, vault.ErrTooLarge)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("secret at %s/sb/credentials is %d bytes", mount, vault.DefaultMaxSecretBytes+1)))
				got, _, err := store.Secret(ctx, "sb/credentials")
				Expect(err).NotTo(HaveOccurred())
				Expect(got).To(Equal(at))
			})
		})
	}
})
