package bosh_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

// startDirector starts a Director simulator that the spec closes.
func startDirector(opts sim.Options) *sim.Director {
	GinkgoHelper()
	d, err := sim.New(opts)
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(d.Close)
	return d
}

// newClient returns a client of d with the simulator's default credentials
// (basic admin/admin, UAA blacksmith/secret) and its CA; edit changes the options.
func newClient(d *sim.Director, edit ...func(*bosh.Options)) *bosh.Client {
	GinkgoHelper()
	opts := bosh.Options{
		Name: "sim", Address: d.URL(),
		Username: sim.DefaultUsername, Password: sim.DefaultPassword,
		ClientID: sim.DefaultClientID, ClientSecret: sim.DefaultClientSecret,
		CACert: string(d.CACertPEM()), Timeout: 10 * time.Second,
		Logger: slog.New(slog.NewTextHandler(GinkgoWriter, nil)),
	}
	for _, e := range edit {
		e(&opts)
	}
	c, err := bosh.New(opts)
	Expect(err).NotTo(HaveOccurred())
	return c
}

// manifest is a small valid deployment manifest named name.
func manifest(name string) string {
	return fmt.Sprintf(`---
name: %s
releases:
- name: redis
  version: "16.1.0"
stemcells:
- alias: default
  os: ubuntu-jammy
  version: "1.506"
instance_groups:
- name: redis
  instances: 2
  azs: [z1, z2]
  jobs:
  - name: redis
    release: redis
  vm_type: small
  stemcell: default
  networks:
  - name: services
- name: smoke-tests
  lifecycle: errand
  instances: 1
  azs: [z1]
  jobs:
  - name: smoke-tests
    release: redis
  vm_type: small
  stemcell: default
  networks:
  - name: services
`, name)
}

// ctxFor is a context that ends with the spec, after at most d.
func ctxFor(d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	DeferCleanup(cancel)
	return ctx
}

// counter is the value of a counter in reg with exactly these labels; -1 when absent.
func counter(reg *prometheus.Registry, name string, labels map[string]string) float64 {
	GinkgoHelper()
	families, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if fmt.Sprint(got) == fmt.Sprint(labels) {
				return m.GetCounter().GetValue()
			}
		}
	}
	return -1
}

// sumCounter sums the series of a counter in reg whose label has value.
func sumCounter(reg *prometheus.Registry, name, label, value string) float64 {
	GinkgoHelper()
	families, err := reg.Gather()
	Expect(err).NotTo(HaveOccurred())
	sum := 0.0
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if f.GetName() == name && l.GetName() == label && l.GetValue() == value {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// fakeServer serves handler over plain HTTP on addr, a loopback address
// ("127.0.0.2:0" for a host other than the simulator's), counts the
// requests it receives, and is closed by the spec.
func fakeServer(addr string, handler http.Handler) (*httptest.Server, *atomic.Int64) {
	GinkgoHelper()
	Expect(net.ParseIP(hostOf(addr)).IsLoopback()).To(BeTrue(), "only loopback may be contacted")
	ln, err := net.Listen("tcp", addr)
	Expect(err).NotTo(HaveOccurred())
	var requests atomic.Int64
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		handler.ServeHTTP(w, r)
	}))
	Expect(s.Listener.Close()).To(Succeed())
	s.Listener = ln
	s.Start()
	DeferCleanup(s.Close)
	return s, &requests
}

// hostOf is the host of a host:port.
func hostOf(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	Expect(err).NotTo(HaveOccurred())
	return host
}
