package vaultserver

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the cache key of the Vault build", func() {
	It("is what ci/vault-key.sh computes, and follows every file of ci/vault", func() {
		out, err := exec.Command("../../ci/vault-key.sh").Output()
		Expect(err).NotTo(HaveOccurred())
		key, err := sourceKey("../../ci/vault")
		Expect(err).NotTo(HaveOccurred())
		Expect(key).To(Equal(strings.TrimSpace(string(out))))
		Expect(key).To(MatchRegexp(`^[0-9a-f]{16}$`))

		dir := GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(dir, "stub", "x"), 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module m\n"), 0o644)).To(Succeed())
		before, err := sourceKey(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "stub", "x", "x.go"), []byte("package x\n"), 0o644)).To(Succeed())
		after, err := sourceKey(dir)
		Expect(err).NotTo(HaveOccurred())
		Expect(after).NotTo(Equal(before), "a file in a stub changes the key")
	})
})
