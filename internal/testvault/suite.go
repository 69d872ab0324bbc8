package testvault

import (
	"context"
	"errors"
	"os"

	"github.com/onsi/ginkgo/v2"

	"github.com/blacksmith-reconciler/blacksmith/internal/vaultserver"
)

// Server is a running Vault dev server (vaultserver.Server).
type Server = vaultserver.Server

// Options tunes a dev server (vaultserver.Options).
type Options = vaultserver.Options

// ErrNoBinary means no Vault binary was found (vaultserver.ErrNoBinary).
var ErrNoBinary = vaultserver.ErrNoBinary

// Start starts a dev server and waits until it answers (see
// vaultserver.Start). Call Stop when done.
func Start(opts Options) (*Server, error) {
	return vaultserver.Start(context.Background(), opts)
}

// InCI reports whether the suite runs in CI, where a missing Vault must fail.
func InCI() bool { return os.Getenv("CI") == "true" }

// ForSuite starts a dev server for a Ginkgo suite (call it in BeforeSuite or a
// BeforeEach) and stops it when the node's cleanup runs. Without a Vault
// binary the spec is skipped on a developer's machine and fails under CI=true.
func ForSuite(opts Options) *Server {
	ginkgo.GinkgoHelper()
	s, err := Start(opts)
	if errors.Is(err, ErrNoBinary) && !InCI() {
		ginkgo.Skip("no Vault binary (run `make vault`): " + err.Error())
	}
	if err != nil {
		ginkgo.Fail("starting a real Vault: " + err.Error())
	}
	ginkgo.DeferCleanup(s.Stop)
	return s
}
