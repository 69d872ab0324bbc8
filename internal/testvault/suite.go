package testvault

import (
	"errors"

	"github.com/onsi/ginkgo/v2"
)

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
