package operator_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
)

func TestOperator(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Operator Suite")
}

// vaultServer is one real Vault dev server for the suite; each spec gets
// its own KV mount.
var vaultServer *testvault.Server

var _ = BeforeSuite(func() {
	vaultServer = testvault.ForSuite(testvault.Options{})
})
