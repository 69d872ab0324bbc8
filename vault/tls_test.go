package vault_test

import (
	"encoding/json"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("TLS", func() {
	var (
		addr, caFile string
		token        string
	)
	BeforeEach(func() {
		srv := server()
		token = srv.Token
		u, err := url.Parse(srv.Addr)
		Expect(err).NotTo(HaveOccurred())
		// A TLS-terminating loopback proxy in front of the real Vault.
		ts := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(u))
		DeferCleanup(ts.Close)
		addr = ts.URL
		caFile = filepath.Join(GinkgoT().TempDir(), "ca.pem")
		pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})
		Expect(os.WriteFile(caFile, pemBytes, 0o600)).To(Succeed())
	})

	It("verifies Vault's certificate against the configured CA", func() {
		s, err := vault.New(ctx, vault.Options{Address: addr, Token: token, CACert: caFile})
		Expect(err).NotTo(HaveOccurred())
		defer s.Close()
		Expect(s.KVVersion()).To(Equal(2))
	})

	It("refuses a certificate it cannot verify", func() {
		_, err := vault.New(ctx, vault.Options{Address: addr, Token: token})
		Expect(errors.Is(err, vault.ErrUnreachable)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("certificate"))
	})

	It("skips verification only when told to", func() {
		s, err := vault.New(ctx, vault.Options{Address: addr, Token: token, SkipSSLValidation: true})
		Expect(err).NotTo(HaveOccurred())
		s.Close()
	})

	It("fails clearly on a missing CA file", func() {
		_, err := vault.New(ctx, vault.Options{Address: addr, Token: token, CACert: "/nonexistent/ca.pem"})
		Expect(err).To(MatchError(ContainSubstring("TLS")))
	})
})

var _ = Describe("Tokens and mounts", func() {
	It("renews a renewable token before it expires", func() {
		srv := server()
		mount := newMount(srv, 2)
		// 5s: LifetimeWatcher renews at about two thirds of the lease, less its
		// random grace (10-20%); a shorter TTL leaves under a second of margin
		// on a loaded machine.
		token := createToken(srv, `{"policies":["root"],"ttl":"5s","explicit_max_ttl":"1h","renewable":true}`)
		s := openStore(srv.Addr, token, mount)
		_, err := s.Update(ctx, map[string]vault.Change{"a": put(rec("s", "p"))})
		Expect(err).NotTo(HaveOccurred())
		// Without renewal the token is gone after 5s.
		Consistently(func() error {
			_, err := s.Record(ctx, "a")
			return err
		}, "11s", "500ms").Should(Succeed())
		Expect(s.Stats().Renewals).To(BeNumerically(">=", 2))
		s.Close()
		s.Close() // idempotent
	})

	It("warns when the token expires and cannot be renewed, and only then", func() {
		srv := server()
		mount := newMount(srv, 2)
		for _, c := range []struct {
			token string
			warn  bool
		}{
			{createToken(srv, `{"policies":["root"],"ttl":"1h","renewable":false}`), true},
			{createToken(srv, `{"policies":["root"],"ttl":"1h","renewable":true}`), false},
			{srv.Token, false}, // no TTL
		} {
			logs := gbytes.NewBuffer()
			openStore(srv.Addr, c.token, mount, func(o *vault.Options) {
				o.Logger = slog.New(slog.NewTextHandler(logs, nil))
			})
			if c.warn {
				Expect(string(logs.Contents())).To(ContainSubstring("vault token is not renewable"))
				Expect(string(logs.Contents())).To(MatchRegexp(`expires_in=(59m|1h)`))
			} else {
				Expect(string(logs.Contents())).NotTo(ContainSubstring("not renewable"))
			}
		}
	})

	It("takes the token from VAULT_TOKEN and requires one", func() {
		srv := server()
		GinkgoT().Setenv("VAULT_TOKEN", srv.Token)
		s, err := vault.New(ctx, vault.Options{Address: srv.Addr})
		Expect(err).NotTo(HaveOccurred())
		s.Close()
		GinkgoT().Setenv("VAULT_TOKEN", "")
		_, err = vault.New(ctx, vault.Options{Address: srv.Addr})
		Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue())
	})

	It("rejects an invalid token", func() {
		srv := server()
		_, err := vault.New(ctx, vault.Options{Address: srv.Addr, Token: "not-a-token"})
		Expect(errors.Is(err, vault.ErrDenied)).To(BeTrue(), "%v", err)
	})

	It("detects the version with a token limited to the mount, and asks for it when it cannot", func() {
		srv := server()
		for _, version := range []int{1, 2} {
			mount := newMount(srv, version)
			policy := `path "` + mount + `/*" { capabilities = ["create","read","update","delete","list"] }`
			code, out, err := srv.Do(http.MethodPut, "/v1/sys/policies/acl/"+mount, `{"policy":`+quote(policy)+`}`)
			Expect(err).NotTo(HaveOccurred())
			Expect(code/100).To(Equal(2), string(out))
			token := createToken(srv, `{"policies":["`+mount+`"],"ttl":"1h"}`)
			s := openStore(srv.Addr, token, mount)
			Expect(s.KVVersion()).To(Equal(version))
		}

		other := newMount(srv, 2)
		token := createToken(srv, `{"policies":["default"],"ttl":"1h"}`)
		_, err := vault.New(ctx, vault.Options{Address: srv.Addr, Token: token, Mount: other})
		Expect(errors.Is(err, vault.ErrInvalid)).To(BeTrue(), "%v", err)
		Expect(err.Error()).To(ContainSubstring("set the kv version"))

		s := openStore(srv.Addr, token, other, func(o *vault.Options) { o.KVVersion = 2 })
		Expect(s.KVVersion()).To(Equal(2))
	})
})

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
