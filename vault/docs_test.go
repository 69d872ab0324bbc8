package vault_test

import (
	"errors"
	"fmt"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// quarantine is the kind of state the reconciler keeps.
type quarantine struct {
	Instances map[string]string `json:"instances"`
	Since     string            `json:"since,omitempty"`
}

var _ = Describe("State documents", func() {
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

			It("round-trips a value and says when there is none", func() {
				var q quarantine
				ok, err := store.State.ReadState(ctx, "quarantine", &q)
				Expect(err).NotTo(HaveOccurred())
				Expect(ok).To(BeFalse())

				want := quarantine{Instances: map[string]string{"i-1": "drift", "i <&> 2": "conflict"}, Since: "now"}
				Expect(store.State.WriteState(ctx, "quarantine", want)).To(Succeed())
				q = quarantine{Since: "stale"}
				ok, err = store.State.ReadState(ctx, "quarantine", &q)
				Expect(err).NotTo(HaveOccurred())
				Expect(ok).To(BeTrue())
				Expect(q).To(Equal(want))
				Expect(rawGet(srv, mount, version, "blacksmith/state/quarantine").Data).To(ContainSubstring(`"value":{"instances"`))

				By("a value that is no object, and an empty one (which KV v1 could not store bare)")
				Expect(store.State.WriteState(ctx, "list-1", []int{3, 1, 2})).To(Succeed())
				var l []int
				Expect(store.State.ReadState(ctx, "list-1", &l)).To(BeTrue())
				Expect(l).To(Equal([]int{3, 1, 2}))
				Expect(store.State.WriteState(ctx, "empty_one", struct{}{})).To(Succeed())
				Expect(store.State.ReadState(ctx, "empty_one", &struct{}{})).To(BeTrue())
			})

			It("refuses bad names, a target that is not a pointer and a value too large, writing nothing", func() {
				before := store.Stats().Writes
				for _, name := range []string{"", "Upper", "a/b", "..", "dot.ted", "sp ace", strings.Repeat("n", 65)} {
					Expect(errors.Is(store.State.WriteState(ctx, name, 1), vault.ErrInvalid)).To(BeTrue(), name)
					var v int
					_, err := store.State.ReadState(ctx, name, &v)
					Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), name)
				}
				var v int
				_, err := store.State.ReadState(ctx, "ok", v)
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue())
				_, err = store.State.ReadState(ctx, "ok", (*int)(nil))
				Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue())
				Expect(errors.Is(store.State.WriteState(ctx, "ok", func() {}), vault.ErrInvalid)).To(BeTrue())
				err = store.State.WriteState(ctx, "ok", strings.Repeat("x", vault.MaxStateBytes))
				Expect(errors.Is(err, vault.ErrTooLarge)).To(BeTrue(), "%v", err)
				Expect(store.Stats().Writes).To(Equal(before))
				Expect(histList(srv, mount, version, "blacksmith/")).To(BeEmpty())
			})

			It("reports a document that does not decode, naming it, and leaves the target alone", func() {
				for name, data := range map[string]string{
					"wrong-type": `{"value":{"instances":"not a map"}}`,
					"no-value":   `{"instances":{}}`,
					"too-large":  `{"value":"` + strings.Repeat("x", vault.MaxStateBytes) + `"}`,
				} {
					rawPut(srv, mount, version, "blacksmith/state/"+name, data)
					q := quarantine{Since: "kept"}
					ok, err := store.State.ReadState(ctx, name, &q)
					Expect(ok).To(BeFalse())
					Expect(errors.Is(err, vault.ErrCorrupt)).To(BeTrue(), "%s: %v", name, err)
					Expect(err.Error()).To(ContainSubstring(mount+"/blacksmith/state/"+name), name)
					Expect(q).To(Equal(quarantine{Since: "kept"}), name)
				}
			})
		})
	}
})
