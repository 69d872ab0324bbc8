package broker_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
)

func TestBroker(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Broker Suite")
}

// vaultServer is one real Vault dev server for the suite; each spec gets
// its own KV mount.
var vaultServer *testvault.Server

var _ = BeforeSuite(func() {
	vaultServer = testvault.ForSuite(testvault.Options{})
})
