package vaultcluster_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestVaultcluster(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "vaultcluster")
}
