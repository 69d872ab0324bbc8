package sim_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("HTTPS", func() {
	It("serves with a certificate from a CA it writes where asked", func() {
		caPath := filepath.Join(GinkgoT().TempDir(), "ca.pem")
		d := start(sim.Options{TLS: true, CACertPath: caPath, ExternalHost: "127.0.0.2:25555", TaskDuration: -1})
		Expect(d.URL()).To(HavePrefix("https://127.0.0.1:"))
		written, err := os.ReadFile(caPath)
		Expect(err).NotTo(HaveOccurred())
		Expect(written).To(Equal(d.CACertPEM()))

		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM(written)).To(BeTrue())
		c := newClient(d)
		c.http.Transport = &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
		Expect(c.get("/deployments").status).To(Equal(http.StatusOK))
		r := c.do(http.MethodPost, "/deployments", []byte(redisManifest("r1", "1")))
		Expect(r.header.Get("Location")).To(MatchRegexp(`^https://127\.0\.0\.2:25555/tasks/\d+$`))

		untrusting := &http.Client{Timeout: 5 * time.Second}
		_, err = untrusting.Get(d.URL() + "/info")
		var unknown x509.UnknownAuthorityError
		Expect(errors.As(err, &unknown)).To(BeTrue(), "%v", err)
	})

	It("fails to start when the CA cannot be written", func() {
		_, err := sim.New(sim.Options{TLS: true, CACertPath: filepath.Join(GinkgoT().TempDir(), "missing", "ca.pem")})
		Expect(err).To(MatchError(ContainSubstring("writing the simulator CA certificate")))
	})
})
