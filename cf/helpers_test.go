package cf_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

// startCC starts the simulator for the spec.
func startCC(opts sim.Options) *sim.CC {
	GinkgoHelper()
	cc, err := sim.New(opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cc.Close)
	return cc
}

// newClient is a client of api with the simulator's credentials.
func newClient(api string, edit ...func(*cf.Options)) *cf.Client {
	GinkgoHelper()
	opts := cf.Options{API: api, ClientID: sim.DefaultClientID, ClientSecret: sim.DefaultClientSecret,
		Timeout: 10 * time.Second, Logger: slog.New(slog.DiscardHandler)}
	for _, e := range edit {
		e(&opts)
	}
	c, err := cf.New(opts)
	Expect(err).NotTo(HaveOccurred())
	return c
}

func ctxFor(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	DeferCleanup(cancel)
	return ctx
}

// planGUIDs are the guids of a broker's plans, read through the client.
func planGUIDs(c *cf.Client, broker string) []string {
	GinkgoHelper()
	plans, err := c.ServicePlans(ctxFor(10*time.Second), broker)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, p := range plans {
		out = append(out, p.GUID)
	}
	return out
}

// proxy fronts the simulator (over TLS with cert when cert is not nil),
// passing every answer body through rewrite with the proxy's own URL, so
// that the simulator's absolute links can be pointed anywhere. It is the
// real simulator behind; only the links change.
type proxy struct {
	*httptest.Server
	rewrite func(body []byte, self string) []byte
}

func startProxy(cc *sim.CC, cert *tls.Certificate, rewrite func(body []byte, self string) []byte) *proxy {
	GinkgoHelper()
	target, err := url.Parse(cc.URL())
	Expect(err).NotTo(HaveOccurred())
	p := &proxy{rewrite: rewrite}
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target) },
		ModifyResponse: func(res *http.Response) error {
			body, err := io.ReadAll(io.LimitReader(res.Body, 256<<20))
			res.Body.Close()
			if err != nil {
				return err
			}
			body = p.rewrite(body, p.URL)
			res.Body = io.NopCloser(bytes.NewReader(body))
			res.ContentLength = int64(len(body))
			res.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		},
		ErrorLog: log.New(io.Discard, "", 0),
	}
	p.Server = httptest.NewUnstartedServer(rp)
	p.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	if cert != nil {
		p.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}
		p.StartTLS()
	} else {
		p.Start()
	}
	DeferCleanup(p.Close)
	return p
}

// pointTo replaces the simulator's URL in answers by to(self).
func pointTo(cc *sim.CC, to func(self string) string) func([]byte, string) []byte {
	return func(body []byte, self string) []byte {
		return bytes.ReplaceAll(body, []byte(cc.URL()), []byte(to(self)))
	}
}

// newCA makes a CA and a certificate it signed for 127.0.0.1.
func newCA() (caPEM string, leaf tls.Certificate) {
	GinkgoHelper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cf test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())
	ca, err := x509.ParseCertificate(caDER)
	Expect(err).NotTo(HaveOccurred())
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	Expect(err).NotTo(HaveOccurred())
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	Expect(err).NotTo(HaveOccurred())
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})),
		tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// countingServer serves 200 {} on 127.0.0.2 (another host than the
// simulator's) and counts the requests it receives.
func countingServer() (*httptest.Server, *atomic.Int64) {
	GinkgoHelper()
	var n atomic.Int64
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		n.Add(1)
		fmt.Fprint(w, `{"pagination":{"next":null},"resources":[]}`)
	}))
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		Skip("127.0.0.2 is not available: " + err.Error())
	}
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	DeferCleanup(s.Close)
	return s, &n
}

// counter is the value of blacksmith_cf_requests_total{endpoint,code_class}; -1 when absent.
func counter(reg *prometheus.Registry, endpoint, class string) float64 {
	GinkgoHelper()
	families, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != "blacksmith_cf_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["endpoint"] == endpoint && got["code_class"] == class {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

// waitForRequests waits until the simulator has begun n requests to key
// (failing the spec when it has not within 10 s).
func waitForRequests(cc *sim.CC, key string, n int) {
	GinkgoHelper()
	Eventually(func() int { return cc.Stats().Requests[key] }).WithTimeout(10*time.Second).WithPolling(2*time.Millisecond).
		Should(BeNumerically(">=", n), "requests begun to %s", key)
}
