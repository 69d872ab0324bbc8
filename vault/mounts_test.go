package vault_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// denyMounts answers the two endpoints that tell a mount's KV version with
// 403, as for a token whose policy grants only the mount's paths.
func denyMounts(w http.ResponseWriter, r *http.Request) bool {
	if !strings.HasPrefix(r.URL.Path, "/v1/sys/internal/ui/mounts") && r.URL.Path != "/v1/sys/mounts" {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusForbidden)
	_, _ = w.Write([]byte(`{"errors":["permission denied"]}`))
	return true
}

var _ = Describe("A mount that is not what the configuration says", func() {
	for _, version := range []int{1, 2} {
		Context(fmt.Sprintf("a KV v%d mount", version), func() {
			It("refuses a configured KV version that the mount contradicts", func() {
				srv := server()
				mount := newMount(srv, version)
				_, err := vault.New(ctx, vault.Options{Address: srv.Addr, Token: srv.Token, Mount: mount, KVVersion: 3 - version})
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring(fmt.Sprintf("mount %s is KV version %d", mount, version)))
			})

			It("gives an error, not an empty index, once the mount is gone", func() {
				srv := server()
				store, mount := newStore(srv, version)
				_, err := store.Update(ctx, map[string]vault.Change{"gone-1": put(rec("s", "p"))})
				Expect(err).NotTo(HaveOccurred())
				Expect(store.PutManifest(ctx, "gone-1", "name: gone-1\n")).To(Succeed())
				code, out, err := srv.Do(http.MethodDelete, "/v1/sys/mounts/"+mount, "")
				Expect(err).NotTo(HaveOccurred())
				Expect(code/100).To(Equal(2), string(out))

				idx, err := store.Index(ctx)
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
				Expect(err.Error()).To(ContainSubstring("no handler for route"))
				Expect(idx).To(BeNil())
				_, err = store.Record(ctx, "gone-1")
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
				_, _, err = store.Manifest(ctx, "gone-1")
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
				_, err = store.Documents.Instances(ctx)
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
				_, err = store.Backups(ctx, "gone-1")
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
			})
		})
	}

	It("refuses a mount that does not exist, even with the KV version configured", func() {
		srv := server()
		_, err := vault.New(ctx, vault.Options{Address: srv.Addr, Token: srv.Token, Mount: "no-such-mount", KVVersion: 2})
		Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("no kv mount at no-such-mount/"))
	})

	It("fails the first read when a token that cannot see mounts is configured with KV v1 for a v2 mount", func() {
		srv := server()
		mount := newMount(srv, 2)
		seed := openStore(srv.Addr, srv.Token, mount)
		_, err := seed.Update(ctx, map[string]vault.Change{"v2-only": put(rec("s", "p"))})
		Expect(err).NotTo(HaveOccurred())
		px := newProxy(srv.Addr, mount)
		px.setFault(denyMounts)

		store := openStore(px.URL(), srv.Token, mount, func(o *vault.Options) { o.KVVersion = 1 })
		Expect(store.KVVersion()).To(Equal(1), "the configured version is trusted when it cannot be checked")
		idx, err := store.Index(ctx)
		Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("versioned K/V"))
		Expect(idx).To(BeNil())
		_, err = store.Update(ctx, map[string]vault.Change{"other": put(rec("s", "p"))})
		Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
		Expect(px.writes.Load()).To(BeZero())
	})
})
