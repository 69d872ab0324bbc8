package config_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

func TestConfig(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "config")
}

// fixtures are files the specs point the configuration at.
var fixtures struct {
	dir                string
	caPEM              string // PEM text of a self-signed certificate
	cert, key          string // paths of a matching certificate and key
	otherCert          string // a second copy of the certificate, elsewhere
	catalogA, catalogB string
}

var _ = BeforeSuite(func() {
	dir, err := os.MkdirTemp("", "config-suite-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	fixtures.dir = dir
	certPEM, keyPEM := selfSigned()
	fixtures.caPEM = certPEM
	fixtures.cert = writeFile(dir, "tls/cert.pem", certPEM)
	fixtures.key = writeFile(dir, "tls/key.pem", keyPEM)
	fixtures.otherCert = writeFile(dir, "other/ca.pem", certPEM)
	fixtures.catalogA = mkdir(dir, "catalog-a")
	fixtures.catalogB = mkdir(dir, "catalog-b")
})

func selfSigned() (certPEM, keyPEM string) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "blacksmith.invalid"},
		DNSNames:              []string{"blacksmith.invalid"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

func writeFile(dir, name, content string) string {
	path := filepath.Join(dir, name)
	Expect(os.MkdirAll(filepath.Dir(path), 0o755)).To(Succeed())
	Expect(os.WriteFile(path, []byte(content), 0o600)).To(Succeed())
	return path
}

func mkdir(dir, name string) string {
	path := filepath.Join(dir, name)
	Expect(os.MkdirAll(path, 0o755)).To(Succeed())
	return path
}

// confFile writes a blacksmith.conf with the given text into a fresh
// directory and returns its path.
func confFile(text string) string {
	return writeFile(GinkgoT().TempDir(), "blacksmith.conf", text)
}

// envOf returns an environment holding exactly m.
func envOf(m map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := m[name]
		return v, ok
	}
}

// requiredEnv sets the four required settings through the environment.
func requiredEnv() map[string]string {
	return map[string]string{
		"BLACKSMITH_BROKER_USERNAME":         "broker",
		"BLACKSMITH_BROKER_PASSWORD":         "broker-secret",
		"BLACKSMITH_OPERATOR_ADMIN_USERNAME": "operator",
		"BLACKSMITH_OPERATOR_ADMIN_PASSWORD": "operator-secret",
		"VAULT_ADDR":                         "http://127.0.0.1:8200",
		"BOSH_ENVIRONMENT":                   "https://127.0.0.1:25555",
	}
}

// with returns a copy of base with extra merged over it.
func with(base map[string]string, extra map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

// requiredYAML sets the four required settings in a file.
const requiredYAML = `
broker:
  username: broker
  password: broker-secret
operator:
  admin: {username: operator, password: operator-secret}
vault:
  address: http://127.0.0.1:8200
bosh:
  address: https://127.0.0.1:25555
`

// problems returns the lines of a *config.Problems error.
func problems(err error) []string {
	GinkgoHelper()
	var p *config.Problems
	Expect(errors.As(err, &p)).To(BeTrue(), "want *config.Problems, got %T: %v", err, err)
	Expect(p.Error()).To(Equal(strings.Join(lines(p), "\n")))
	return lines(p)
}

func lines(p *config.Problems) []string {
	out := make([]string, len(p.List))
	for i, pr := range p.List {
		out[i] = pr.String()
	}
	return out
}

// nested turns a dotted key and a YAML value into nested YAML text.
func nested(key, value string) string {
	parts := strings.Split(key, ".")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(strings.Repeat("  ", i) + p + ":")
		if i < len(parts)-1 {
			b.WriteString("\n")
		}
	}
	b.WriteString(" " + value + "\n")
	return b.String()
}
