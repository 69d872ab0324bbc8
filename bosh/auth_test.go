package bosh_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("Authentication", func() {
	var ctx context.Context
	BeforeEach(func() { ctx = ctxFor(30 * time.Second) })

	Context("basic", func() {
		It("names the Director in a clear error for a wrong password, and does not retry", func() {
			d := startDirector(sim.Options{})
			c := newClient(d, func(o *bosh.Options) { o.Name = "lab"; o.Password = "wrong" })
			var err error
			Expect(func() { _, err = c.Deployments(ctx) }).NotTo(Panic())
			Expect(err).To(MatchError(bosh.ErrUnauthorized))
			Expect(err.Error()).To(ContainSubstring(`bosh director "lab"`))
			Expect(err.Error()).To(ContainSubstring("status 401"))
			Expect(err.Error()).To(ContainSubstring("Not authorized: '/deployments'"))
			Expect(d.Stats().Requests).To(HaveKeyWithValue("GET /deployments", 1))

			_, err = c.Deploy(ctx, []byte(manifest("x")))
			Expect(err).To(MatchError(bosh.ErrUnauthorized))
			Expect(d.Stats().Tasks).To(BeZero())
		})

		It("says so when the Director wants basic auth and only UAA credentials are configured", func() {
			d := startDirector(sim.Options{})
			c := newClient(d, func(o *bosh.Options) { o.Username, o.Password = "", "" })
			_, err := c.Deployments(ctx)
			Expect(err).To(MatchError(bosh.ErrUnauthorized))
			Expect(err.Error()).To(ContainSubstring("uses basic auth but no username and password are configured"))
		})
	})

	Context("UAA client credentials", func() {
		It("fetches one token for many calls and sends it as a bearer token", func() {
			d := startDirector(sim.Options{Auth: sim.AuthUAA})
			c := newClient(d, func(o *bosh.Options) { o.Username, o.Password = "", "" })
			for range 5 {
				_, err := c.Deployments(ctx)
				Expect(err).NotTo(HaveOccurred())
			}
			task, err := c.Deploy(ctx, []byte(manifest("redis-u")))
			Expect(err).NotTo(HaveOccurred())
			Expect(task.User).To(Equal(sim.DefaultClientID))
			Expect(d.Stats().Tokens).To(Equal(1))
		})

		It("renews a refused token once and resends the request's body", func() {
			d := startDirector(sim.Options{Auth: sim.AuthUAA, TaskDuration: -1})
			c := newClient(d)
			_, err := c.Deployments(ctx)
			Expect(err).NotTo(HaveOccurred())
			d.RevokeTokens()

			text := manifest("redis-after-revoke")
			task, err := c.Deploy(ctx, []byte(text))
			Expect(err).NotTo(HaveOccurred())
			Expect(c.WaitTask(ctx, task.ID, 10*time.Millisecond)).To(HaveField("State", bosh.TaskDone))
			Expect(c.Manifest(ctx, "redis-after-revoke")).To(Equal(text), "the retried POST must carry the manifest")
			stats := d.Stats()
			Expect(stats.Tokens).To(Equal(2))
			Expect(stats.Requests).To(HaveKeyWithValue("POST /deployments", 2))
		})

		It("keeps the HTTP timeout after a token renewal", func() {
			d := startDirector(sim.Options{Auth: sim.AuthUAA})
			c := newClient(d, func(o *bosh.Options) { o.Timeout = 300 * time.Millisecond })
			_, err := c.Deployments(ctx)
			Expect(err).NotTo(HaveOccurred())
			d.RevokeTokens()
			_, err = c.Deployments(ctx) // 401, renewal, success
			Expect(err).NotTo(HaveOccurred())
			Expect(d.Stats().Tokens).To(Equal(2))

			d.Knobs().SetLatency(5 * time.Second)
			start := time.Now()
			_, err = c.Deployments(ctx)
			Expect(err).To(MatchError(ContainSubstring("Client.Timeout exceeded")))
			Expect(time.Since(start)).To(BeNumerically("<", 3*time.Second))
		})

		It("keeps using a token that has not expired while UAA cannot renew it", func() {
			d := startDirector(sim.Options{Auth: sim.AuthUAA, TokenTTL: 3 * time.Second})
			c := newClient(d)
			_, err := c.Deployments(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(d.Faults().Inject(sim.Failure{Endpoint: "POST /oauth/token", Status: 503, Count: 1})).To(Succeed())

			var failures []error
			call := func() {
				if _, err := c.Deployments(ctx); err != nil {
					failures = append(failures, err)
				}
			}
			// The renewal is due at 2.4 s; the first attempt meets the 503, a later one succeeds.
			Eventually(func() int { call(); return d.Stats().Tokens }).WithTimeout(6 * time.Second).
				WithPolling(50 * time.Millisecond).Should(Equal(2))
			Expect(d.Faults().List()).To(BeEmpty(), "the renewal met the injected 503")
			Expect(failures).To(BeEmpty())
		})

		It("gives a clear error for a wrong client secret, without reaching the Director", func() {
			d := startDirector(sim.Options{Auth: sim.AuthUAA})
			c := newClient(d, func(o *bosh.Options) { o.Name = "prod"; o.ClientSecret = "wrong" })
			var err error
			Expect(func() { _, err = c.Deployments(ctx) }).NotTo(Panic())
			Expect(err).To(MatchError(bosh.ErrUnauthorized))
			Expect(err.Error()).To(ContainSubstring(`bosh director "prod"`))
			Expect(err.Error()).To(ContainSubstring(`refused client "blacksmith"`))
			Expect(err.Error()).To(ContainSubstring("Bad credentials"))
			Expect(d.Stats().Requests).NotTo(HaveKey("GET /deployments"))
		})

		It("refuses to send the client secret to a plain-http UAA on another host, before any request to it", func() {
			uaa, requests := fakeServer("127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"access_token":"stolen","token_type":"bearer","expires_in":600}`))
			}))
			d := startDirector(sim.Options{Auth: sim.AuthUAA, UAAURL: uaa.URL})
			c := newClient(d, func(o *bosh.Options) { o.Name = "lab"; o.Username, o.Password = "", "" })
			_, err := c.Deployments(ctx)
			Expect(requests.Load()).To(BeZero(), "the client secret was sent")
			Expect(err).To(MatchError(bosh.ErrUntrustedUAA))
			Expect(err).To(MatchError(ContainSubstring(`bosh director "lab": refusing to send the client secret to UAA at "` +
				uaa.URL + `/oauth/token": the token URL must be https`)))
			Expect(d.Stats().Tokens).To(BeZero())
			Expect(d.Stats().Requests).To(Equal(map[string]int{"GET /info": 1}))
		})

		It("refuses plain http toward another port of the Director's loopback host", func() {
			other, requests := fakeServer("127.0.0.1:0", http.NotFoundHandler())
			d := startDirector(sim.Options{Auth: sim.AuthUAA, UAAURL: other.URL})
			_, err := newClient(d).Deployments(ctx)
			Expect(requests.Load()).To(BeZero(), "the client secret was sent")
			Expect(err).To(MatchError(bosh.ErrUntrustedUAA))
			Expect(err).To(MatchError(ContainSubstring("or plain http toward the Director's own loopback address")))
		})

		It("sends the client secret over https to a UAA under another host name", func() {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			Expect(err).NotTo(HaveOccurred())
			port := ln.Addr().(*net.TCPAddr).Port
			Expect(ln.Close()).To(Succeed())
			d := startDirector(sim.Options{Addr: fmt.Sprintf("127.0.0.1:%d", port), Auth: sim.AuthUAA, TLS: true,
				UAAURL: fmt.Sprintf("https://localhost:%d", port)})
			_, err = newClient(d).Deployments(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(d.Stats().Tokens).To(Equal(1))
		})

		It("surfaces a missing scope as ErrUnauthorized with the Director's code", func() {
			d := startDirector(sim.Options{Auth: sim.AuthUAA, ClientScopes: []string{"openid"}})
			c := newClient(d)
			_, err := c.Deployments(ctx)
			Expect(err).To(MatchError(bosh.ErrUnauthorized))
			var apiErr *bosh.APIError
			Expect(errors.As(err, &apiErr)).To(BeTrue())
			Expect(apiErr.Code).To(Equal(600000))
			Expect(apiErr.Description).To(HavePrefix("Require one of the scopes: bosh.admin"))
			Expect(d.Stats().Requests).To(HaveKeyWithValue("GET /deployments", 2), "one renewal, then give up")
		})

		It("runs 20 seconds of continuous calls from 8 goroutines on 5-second tokens without a failure", Label("uaa-soak"), func() {
			d := startDirector(sim.Options{Auth: sim.AuthUAA, TokenTTL: 5 * time.Second, TLS: true,
				Latency: 10 * time.Millisecond, TaskDuration: -1})
			reg := prometheus.NewRegistry()
			c := newClient(d, func(o *bosh.Options) { o.Username, o.Password = "", ""; o.Metrics = bosh.NewMetrics(reg) })
			Expect(d.PutDeployment(manifest("soak"))).To(Succeed())
			start := time.Now()
			calls, failures := hammer(c, 8, func(int64) bool { return time.Since(start) < 20*time.Second })
			tokens := d.Stats().Tokens
			GinkgoWriter.Printf("soak: %d calls, %d tokens\n", calls, tokens)
			Expect(failures).To(BeEmpty())
			Expect(calls).To(BeNumerically(">", 800))
			// Renewed at 4 s, 8 s, 12 s and 16 s, each time by one goroutine for all.
			Expect(tokens).To(BeNumerically(">=", 5))
			Expect(tokens).To(BeNumerically("<=", 7))
			Expect(sumCounter(reg, "blacksmith_bosh_requests_total", "code_class", "4xx")).To(BeZero(),
				"tokens are renewed before they expire, not after a 401")
		})

		It("renews a revoked token once for 8 goroutines, none of them failing", func() {
			d := startDirector(sim.Options{Auth: sim.AuthUAA, Latency: 5 * time.Millisecond, TaskDuration: -1})
			c := newClient(d)
			Expect(d.PutDeployment(manifest("soak"))).To(Succeed())
			var revoked atomic.Bool
			calls, failures := hammer(c, 8, func(calls int64) bool {
				if calls >= 80 && !revoked.Swap(true) {
					d.RevokeTokens()
				}
				return calls < 320
			})
			Expect(failures).To(BeEmpty())
			Expect(calls).To(BeNumerically(">=", 320))
			Expect(revoked.Load()).To(BeTrue())
			Expect(d.Stats().Tokens).To(Equal(2))
		})
	})

	Context("TLS", func() {
		var d *sim.Director
		BeforeEach(func() { d = startDirector(sim.Options{TLS: true, Auth: sim.AuthUAA}) })

		It("refuses a certificate its CA does not sign", func() {
			c := newClient(d, func(o *bosh.Options) { o.CACert = "" })
			_, err := c.Deployments(ctx)
			var unknown x509.UnknownAuthorityError
			Expect(errors.As(err, &unknown)).To(BeTrue(), "%v", err)

			other := startDirector(sim.Options{TLS: true})
			c = newClient(d, func(o *bosh.Options) { o.CACert = string(other.CACertPEM()) })
			_, err = c.Info(ctx)
			var verify *tls.CertificateVerificationError
			Expect(errors.As(err, &verify)).To(BeTrue(), "%v", err)
			Expect(d.Stats().Requests).To(BeEmpty())
		})

		It("accepts the Director and its UAA with the right CA", func() {
			c := newClient(d)
			_, err := c.Deployments(ctx)
			Expect(err).NotTo(HaveOccurred())
			Expect(d.Stats().Tokens).To(Equal(1))
		})

		It("skips verification only when configured to", func() {
			c := newClient(d, func(o *bosh.Options) { o.CACert = ""; o.SkipSSLValidation = true })
			_, err := c.Deployments(ctx)
			Expect(err).NotTo(HaveOccurred())
		})
	})

	It("treats a Director unreachable at start-up as an error to retry, then works once it is up", func() {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		addr := ln.Addr().String()
		Expect(ln.Close()).To(Succeed())

		c, err := bosh.New(bosh.Options{Name: "late", Address: "http://" + addr, Username: "admin", Password: "admin"})
		Expect(err).NotTo(HaveOccurred(), "New does no network I/O")
		_, err = c.Deployments(ctx)
		Expect(err).To(HaveOccurred())
		Expect(err).NotTo(MatchError(bosh.ErrUnauthorized))
		Expect(err.Error()).To(ContainSubstring(`bosh director "late"`))
		Expect(err.Error()).To(ContainSubstring("connection refused"))

		startDirector(sim.Options{Addr: addr})
		Expect(c.Deployments(ctx)).To(BeEmpty(), "the same client detects the authentication type now")
	})
})
