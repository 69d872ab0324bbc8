package lease_test

import (
	"context"
	"log/slog"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

func TestLease(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "internal/lease")
}

var (
	server *testvault.Server
	ctx    = context.Background()
	mounts int
)

var _ = BeforeSuite(func() { server = testvault.ForSuite(testvault.Options{}) })

// newStore is a store on a fresh KV v2 mount of the suite's real Vault.
func newStore() *vault.Store {
	GinkgoHelper()
	mounts++
	mount := "lease" + string(rune('a'+mounts))
	Expect(server.EnableKV(mount, 2)).To(Succeed())
	s, err := vault.New(ctx, vault.Options{Address: server.Addr, Token: server.Token, Mount: mount,
		Logger: slog.New(slog.NewTextHandler(GinkgoWriter, nil))})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(s.Close)
	return s
}

func logger() *slog.Logger { return slog.New(slog.NewTextHandler(GinkgoWriter, nil)) }
