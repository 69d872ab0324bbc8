package manifests_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"time"

	. "github.com/onsi/gomega"
)

// certificate is what a config server's certificate variable holds.
type certificate struct {
	ca, cert, key string // PEM
	parsed        *x509.Certificate
	signer        *ecdsa.PrivateKey
}

// newCertificate makes a certificate for commonName and sans, signed by
// issuer, or self-signed when issuer is nil.
func newCertificate(issuer *certificate, commonName string, isCA bool, sans ...string) *certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  isCA,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, san := range sans {
		if ip := net.ParseIP(san); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, san)
		}
	}
	parent, signer := tmpl, key
	if issuer != nil {
		parent, signer = issuer.parsed, issuer.signer
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	Expect(err).NotTo(HaveOccurred())
	parsed, err := x509.ParseCertificate(der)
	Expect(err).NotTo(HaveOccurred())
	keyDER, err := x509.MarshalECPrivateKey(key)
	Expect(err).NotTo(HaveOccurred())
	c := &certificate{
		cert:   string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		key:    string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})),
		parsed: parsed,
		signer: key,
	}
	c.ca = c.cert
	if issuer != nil {
		c.ca = issuer.cert
	}
	return c
}

// value is the certificate as a config server gives it to a manifest.
func (c *certificate) value() map[string]any {
	return map[string]any{"ca": c.ca, "certificate": c.cert, "private_key": c.key}
}
