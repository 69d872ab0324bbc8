package cf_test

import (
	"crypto/tls"
	"errors"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

var _ = Describe("links and TLS", func() {
	var cc *sim.CC
	BeforeEach(func() {
		cc = startCC(sim.Options{})
		_, err := cc.Foundation().Seed("blacksmith", 5)
		Expect(err).NotTo(HaveOccurred())
	})

	It("follows next links through a proxy that names itself", func() {
		p := startProxy(cc, nil, pointTo(cc, func(self string) string { return self }))
		c := newClient(p.URL, func(o *cf.Options) { o.PerPage = 2 })
		instances, err := c.ServiceInstances(ctxFor(5*time.Second), planGUIDs(c, "blacksmith"))
		Expect(err).NotTo(HaveOccurred())
		Expect(instances).To(HaveLen(5))
	})

	It("refuses a next link to another host and never dials it", func() {
		other, hits := countingServer()
		p := startProxy(cc, nil, func(body []byte, self string) []byte {
			s := string(body)
			if strings.Contains(s, `"pagination"`) && strings.Contains(s, "service_instances") {
				return []byte(strings.ReplaceAll(s, cc.URL(), other.URL))
			}
			return []byte(strings.ReplaceAll(s, cc.URL(), self))
		})
		c := newClient(p.URL, func(o *cf.Options) { o.PerPage = 2 })
		instances, err := c.ServiceInstances(ctxFor(5*time.Second), planGUIDs(c, "blacksmith"))
		Expect(err).To(MatchError(cf.ErrUnsafeLink))
		Expect(err.Error()).To(ContainSubstring(other.URL))
		Expect(instances).To(BeNil())
		Expect(hits.Load()).To(BeZero())
	})

	It("refuses a next link that loops", func() {
		p := startProxy(cc, nil, func(body []byte, self string) []byte {
			s := strings.ReplaceAll(string(body), cc.URL(), self)
			return []byte(strings.ReplaceAll(s, "page=2", "page=1"))
		})
		plans := planGUIDs(newClient(cc.URL()), "blacksmith")
		c := newClient(p.URL, func(o *cf.Options) { o.PerPage = 2 })
		_, err := c.ServiceInstances(ctxFor(5*time.Second), plans)
		Expect(err).To(MatchError(cf.ErrUnsafeLink))
		Expect(err.Error()).To(ContainSubstring("read before"))
		Expect(cc.Stats().Requests[listKey]).To(Equal(2)) // page 1 as first asked, then as linked
	})

	Context("over TLS with a generated CA", func() {
		var (
			caPEM string
			p     *proxy
		)
		BeforeEach(func() {
			var cert tls.Certificate
			caPEM, cert = newCA()
			p = startProxy(cc, &cert, pointTo(cc, func(self string) string { return self }))
		})

		It("verifies the certificate against CACert", func() {
			c := newClient(p.URL, func(o *cf.Options) { o.CACert = caPEM; o.PerPage = 2 })
			instances, err := c.ServiceInstances(ctxFor(5*time.Second), planGUIDs(c, "blacksmith"))
			Expect(err).NotTo(HaveOccurred())
			Expect(instances).To(HaveLen(5))
		})

		It("refuses a certificate no trusted CA signed", func() {
			otherCA, _ := newCA()
			for _, ca := range []string{"", otherCA} {
				c := newClient(p.URL, func(o *cf.Options) { o.CACert = ca })
				_, err := c.ServicePlans(ctxFor(5*time.Second), "blacksmith")
				var verify *tls.CertificateVerificationError
				Expect(errors.As(err, &verify)).To(BeTrue(), "%v", err)
			}
			Expect(cc.Stats().Tokens).To(BeZero())
		})

		It("skips verification only when told to", func() {
			c := newClient(p.URL, func(o *cf.Options) { o.SkipSSLValidation = true })
			_, err := c.ServicePlans(ctxFor(5*time.Second), "blacksmith")
			Expect(err).NotTo(HaveOccurred())
		})

		It("does not send the secret to a plain-http UAA named by an https API", func() {
			p.rewrite = func(body []byte, self string) []byte {
				return []byte(strings.ReplaceAll(string(body), `"href":"`+cc.URL()+`/uaa"`, `"href":"`+cc.UAAURL()+`"`))
			}
			c := newClient(p.URL, func(o *cf.Options) { o.CACert = caPEM })
			_, err := c.ServicePlans(ctxFor(5*time.Second), "blacksmith")
			Expect(err).To(MatchError(cf.ErrUnsafeLink))
			Expect(cc.Stats().Tokens).To(BeZero())
		})
	})
})
