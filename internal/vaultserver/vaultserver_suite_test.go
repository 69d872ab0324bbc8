package vaultserver_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestVaultserver(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "vaultserver")
}
