package vaultserver_test

import (
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultserver"
)

// setenv sets an environment variable for the current spec.
func setenv(key, value string) {
	old, had := os.LookupEnv(key)
	Expect(os.Setenv(key, value)).To(Succeed())
	DeferCleanup(func() {
		if had {
			os.Setenv(key, old)
		} else {
			os.Unsetenv(key)
		}
	})
}

var _ = Describe("finding the binary", func() {
	It("takes VAULT_BIN as given, and says so when it does not exist", func() {
		missing := filepath.Join(GinkgoT().TempDir(), "vault")
		setenv("VAULT_BIN", missing)
		_, err := vaultserver.Binary()
		Expect(err).To(MatchError(ContainSubstring("VAULT_BIN=" + missing)))
		Expect(errors.Is(err, fs.ErrNotExist)).To(BeTrue())
		Expect(errors.Is(err, vaultserver.ErrNoBinary)).To(BeFalse())
	})
})

var _ = Describe("a dev server", func() {
	BeforeEach(func() {
		if _, err := vaultserver.Binary(); errors.Is(err, vaultserver.ErrNoBinary) && !testvault.InCI() {
			Skip("no Vault binary (run `make vault`): " + err.Error())
		}
	})

	It("answers once started and no longer once stopped", func(ctx SpecContext) {
		s, err := vaultserver.Start(ctx, vaultserver.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Stop)
		Expect(s.EnableKV("kv", 2)).To(Succeed())
		code, _, err := s.Do(http.MethodGet, "/v1/sys/mounts/kv", "")
		Expect(err).NotTo(HaveOccurred())
		Expect(code).To(Equal(http.StatusOK))

		s.Stop()
		s.Stop()
		_, _, err = s.Do(http.MethodGet, "/v1/sys/health", "")
		Expect(err).To(HaveOccurred())
	})

	It("gives up when its context ends before the server answers", func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := vaultserver.Start(ctx, vaultserver.Options{})
		Expect(err).To(MatchError(context.Canceled))
	})
})
