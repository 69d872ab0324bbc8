package e2e_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("Configured options", func() {
	It("guards /metrics with basic auth when metrics credentials are set", func() {
		d := startDaemon("metrics:\n  username: prom\n  password: scrape\n")
		code, _ := d.get("/metrics", "", "")
		Expect(code).To(Equal(http.StatusUnauthorized))
		code, _ = d.get("/metrics", "prom", "wrong")
		Expect(code).To(Equal(http.StatusUnauthorized))
		code, body := d.get("/metrics", "prom", "scrape")
		Expect(code).To(Equal(http.StatusOK))
		Expect(body).To(ContainSubstring("blacksmith_broker_requests_total"))
		code, _ = d.get("/healthz", "", "")
		Expect(code).To(Equal(http.StatusOK))
	})

	It("serves HTTPS when broker.tls is enabled", func() {
		dir := GinkgoT().TempDir()
		certPEM, certPath, keyPath := selfSigned(dir)
		addr := freeAddr()
		cfg := writeConfig(addr, vaultServer.Addr, "")
		text, err := os.ReadFile(cfg)
		Expect(err).NotTo(HaveOccurred())
		tlsSection := "  tls:\n    enabled: true\n    cert: " + certPath + "\n    key: " + keyPath + "\noperator:" // the broker's section ends there
		Expect(os.WriteFile(cfg, []byte(strings.Replace(string(text), "operator:", tlsSection, 1)), 0o600)).To(Succeed())
		d := &daemon{url: "https://" + addr, config: cfg}
		DeferCleanup(d.stop)
		d.start()

		pool := x509.NewCertPool()
		Expect(pool.AppendCertsFromPEM(certPEM)).To(BeTrue())
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
		Eventually(func() int {
			req, _ := http.NewRequest(http.MethodGet, d.url+"/v2/catalog", nil)
			req.SetBasicAuth(brokerUser, brokerPass)
			req.Header.Set("X-Broker-API-Version", "2.14")
			res, err := client.Do(req)
			if err != nil {
				return 0
			}
			res.Body.Close()
			return res.StatusCode
		}).WithTimeout(30 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(http.StatusOK))
	})
})

// selfSigned writes a self-signed certificate for 127.0.0.1 and its key.
func selfSigned(dir string) (certPEM []byte, certPath, keyPath string) {
	GinkgoHelper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "blacksmith-e2e"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	certPEM = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	Expect(os.WriteFile(certPath, certPEM, 0o600)).To(Succeed())
	Expect(os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600)).To(Succeed())
	return certPEM, certPath, keyPath
}
