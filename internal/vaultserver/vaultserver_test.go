package vaultserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

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

// The binary ci/vault builds is Vault's own core with only what the suites
// and `make run` use; these specs hold it to what they rely on.
var _ = Describe("the development build of Vault (ci/vault)", func() {
	BeforeEach(func() {
		if _, err := vaultserver.Binary(); errors.Is(err, vaultserver.ErrNoBinary) && !testvault.InCI() {
			Skip("no Vault binary (run `make vault`): " + err.Error())
		}
	})

	do := func(s *vaultserver.Server, method, path, body string) (int, map[string]any) {
		GinkgoHelper()
		code, out, err := s.Do(method, path, body)
		Expect(err).NotTo(HaveOccurred())
		var v map[string]any
		if len(out) > 0 {
			Expect(json.Unmarshal(out, &v)).To(Succeed(), string(out))
		}
		return code, v
	}
	mountVersion := func(s *vaultserver.Server) any {
		GinkgoHelper()
		code, v := do(s, http.MethodGet, "/v1/sys/mounts/secret", "")
		Expect(code).To(Equal(http.StatusOK), "%v", v)
		return v["options"].(map[string]any)["version"]
	}

	It("mounts secret/ as KV v2, or v1 with -dev-kv-v1, and prints the dev banner", func(ctx SpecContext) {
		v2, err := vaultserver.Start(ctx, vaultserver.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(v2.Stop)
		Expect(mountVersion(v2)).To(Equal("2"))
		Eventually(v2.Log).Should(MatchRegexp(`Unseal Key: \S+`))
		Expect(v2.Log()).To(ContainSubstring("Root Token: " + vaultserver.RootToken))

		v1, err := vaultserver.Start(ctx, vaultserver.Options{KVv1: true})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(v1.Stop)
		Expect(mountVersion(v1)).To(Equal("1"))
	})

	It("is a real Vault: check-and-set, policies, tokens, seal, and an audit device", func(ctx SpecContext) {
		s, err := vaultserver.Start(ctx, vaultserver.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(s.Stop)
		Eventually(func() int { code, _ := do(s, http.MethodGet, "/v1/secret/config", ""); return code }).Should(Equal(http.StatusOK))

		auditLog := filepath.Join(GinkgoT().TempDir(), "audit.log")
		code, v := do(s, http.MethodPut, "/v1/sys/audit/file", `{"type":"file","options":{"file_path":"`+auditLog+`"}}`)
		Expect(code).To(Equal(http.StatusNoContent), "%v", v)

		code, v = do(s, http.MethodPost, "/v1/secret/data/a", `{"options":{"cas":0},"data":{"k":"1"}}`)
		Expect(code).To(Equal(http.StatusOK), "%v", v)
		code, v = do(s, http.MethodPost, "/v1/secret/data/a", `{"options":{"cas":0},"data":{"k":"2"}}`)
		Expect(code).To(Equal(http.StatusBadRequest), "a second write with cas 0 is refused: %v", v)

		code, v = do(s, http.MethodPut, "/v1/sys/policies/acl/ro", `{"policy":"path \"secret/data/*\" { capabilities = [\"read\"] }"}`)
		Expect(code).To(Equal(http.StatusNoContent), "%v", v)
		code, v = do(s, http.MethodPost, "/v1/auth/token/create", `{"policies":["ro"],"ttl":"5m"}`)
		Expect(code).To(Equal(http.StatusOK), "%v", v)
		token := v["auth"].(map[string]any)["client_token"].(string)
		req := func(method, body string) int {
			r, err := http.NewRequestWithContext(ctx, method, s.Addr+"/v1/secret/data/a", strings.NewReader(body))
			Expect(err).NotTo(HaveOccurred())
			r.Header.Set("X-Vault-Token", token)
			resp, err := http.DefaultClient.Do(r)
			Expect(err).NotTo(HaveOccurred())
			resp.Body.Close()
			return resp.StatusCode
		}
		Expect(req(http.MethodGet, "")).To(Equal(http.StatusOK))
		Expect(req(http.MethodPost, `{"data":{"k":"3"}}`)).To(Equal(http.StatusForbidden))

		Expect(os.ReadFile(auditLog)).To(ContainSubstring(`"path":"secret/data/a"`))
		Expect(s.Seal()).To(Succeed())
		code, _ = do(s, http.MethodGet, "/v1/secret/data/a", "")
		Expect(code).To(Equal(http.StatusServiceUnavailable))
	})

	It("runs as a dev server or from a configuration file, and refuses one without storage, naming it", func() {
		bin, err := vaultserver.Binary()
		Expect(err).NotTo(HaveOccurred())
		key, err := exec.Command("../../ci/vault-key.sh").Output()
		Expect(err).NotTo(HaveOccurred())
		if !strings.Contains(bin, "vault-"+strings.TrimSpace(string(key))) {
			Skip("VAULT_BIN is not the ci/vault build (a whole Vault runs in any mode): " + bin)
		}
		out, err := exec.Command(bin, "server", "-config=/dev/null").CombinedOutput()
		Expect(err).To(HaveOccurred())
		Expect(string(out)).To(ContainSubstring(`a storage block is required: storage "raft" or storage "file"`))
	})
})
