package cf_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf"
	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

const writesCatalog = `{"services":[{"id":"svc-1","name":"redis","description":"Redis","bindable":true,
"plans":[{"id":"plan-1","name":"small","description":"Small","free":true},{"id":"plan-2","name":"large","description":"Large","free":false}]}]}`

// catalogBroker is a loopback OSB broker that serves writesCatalog to admin:pw.
func catalogBroker() *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "admin" || p != "pw" || r.URL.Path != "/v2/catalog" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(writesCatalog))
	}))
	DeferCleanup(s.Close)
	return s
}

var _ = Describe("the errand's writes (Admin)", func() {
	var (
		cc     *sim.CC
		c      *cf.Client
		admin  *cf.Admin
		broker *httptest.Server
		spec   cf.BrokerSpec
	)
	BeforeEach(func() {
		cc = startCC(sim.Options{})
		c = newClient(cc.URL(), func(o *cf.Options) { o.JobPoll = 20 * time.Millisecond })
		admin = cf.NewAdmin(c)
		broker = catalogBroker()
		spec = cf.BrokerSpec{Name: "blacksmith", URL: broker.URL, Username: "admin", Password: "pw"}
	})

	It("registers a broker, waiting for its catalog's job, updates it and deletes it", func() {
		Expect(admin.CreateServiceBroker(ctxFor(30*time.Second), spec)).To(Succeed())
		b, err := c.ServiceBroker(ctxFor(5*time.Second), "blacksmith")
		Expect(err).NotTo(HaveOccurred())
		Expect(b.URL).To(Equal(broker.URL))
		Expect(planGUIDs(c, "blacksmith")).To(HaveLen(2), "the job ended once the catalog was applied")

		other := catalogBroker()
		spec.URL = other.URL
		Expect(admin.UpdateServiceBroker(ctxFor(30*time.Second), b.GUID, spec)).To(Succeed())
		b, err = c.ServiceBroker(ctxFor(5*time.Second), "blacksmith")
		Expect(err).NotTo(HaveOccurred())
		Expect(b.URL).To(Equal(other.URL))

		Expect(admin.DeleteServiceBroker(ctxFor(30*time.Second), b.GUID)).To(Succeed())
		_, err = c.ServiceBroker(ctxFor(5*time.Second), "blacksmith")
		Expect(err).To(MatchError(cf.ErrNotFound))
	})

	It("says a registration whose catalog fetch failed is a failed job, with the Cloud Controller's reason", func() {
		spec.Password = "wrong"
		err := admin.CreateServiceBroker(ctxFor(30*time.Second), spec)
		Expect(err).To(MatchError(cf.ErrJobFailed))
		var jobErr *cf.JobError
		Expect(errors.As(err, &jobErr)).To(BeTrue())
		Expect(err.Error()).To(ContainSubstring("service_broker.catalog.synchronize"))
		Expect(err.Error()).NotTo(ContainSubstring("wrong"), "the password is in no error")
	})

	It("refuses to delete a broker whose plans have instances, as CF-ServiceBrokerNotRemovable", func() {
		Expect(admin.CreateServiceBroker(ctxFor(30*time.Second), spec)).To(Succeed())
		space, err := cc.Foundation().AddSpace(cc.Foundation().AddOrg("o").GUID, "s")
		Expect(err).NotTo(HaveOccurred())
		_, err = cc.Foundation().AddInstance("i-1", "one", planGUIDs(c, "blacksmith")[0], space.GUID, sim.LastOperation{Type: sim.OpCreate, State: sim.StateSucceeded})
		Expect(err).NotTo(HaveOccurred())
		b, err := c.ServiceBroker(ctxFor(5*time.Second), "blacksmith")
		Expect(err).NotTo(HaveOccurred())
		err = admin.DeleteServiceBroker(ctxFor(30*time.Second), b.GUID)
		var apiErr *cf.APIError
		Expect(errors.As(err, &apiErr)).To(BeTrue())
		Expect(apiErr.Code).To(Equal(cf.CodeBrokerNotRemovable))
		Expect(err.Error()).To(ContainSubstring("DELETE /v3/service_brokers/:guid: status 422"))
	})

	It("sets a plan's visibility to admin, to orgs and to public, and reads it back", func() {
		Expect(admin.CreateServiceBroker(ctxFor(30*time.Second), spec)).To(Succeed())
		plan := planGUIDs(c, "blacksmith")[0]
		v, err := admin.PlanVisibility(ctxFor(5*time.Second), plan)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Type).To(Equal(cf.VisibilityPublic), "the simulator starts a global broker's plans public")

		Expect(admin.SetPlanVisibility(ctxFor(5*time.Second), plan, cf.Visibility{Type: cf.VisibilityAdmin})).To(Succeed())
		v, err = admin.PlanVisibility(ctxFor(5*time.Second), plan)
		Expect(err).NotTo(HaveOccurred())
		Expect(v).To(Equal(cf.Visibility{Type: cf.VisibilityAdmin}))

		a, b := cc.Foundation().AddOrg("alpha"), cc.Foundation().AddOrg("beta")
		cc.Foundation().AddOrg("gamma")
		orgs, err := admin.Organizations(ctxFor(5*time.Second), []string{"alpha", "beta", "nowhere"})
		Expect(err).NotTo(HaveOccurred())
		Expect(orgs).To(ConsistOf(cf.Org{GUID: a.GUID, Name: "alpha"}, cf.Org{GUID: b.GUID, Name: "beta"}))
		Expect(admin.SetPlanVisibility(ctxFor(5*time.Second), plan, cf.Visibility{Type: cf.VisibilityOrganization, Orgs: orgs})).To(Succeed())
		v, err = admin.PlanVisibility(ctxFor(5*time.Second), plan)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Type).To(Equal(cf.VisibilityOrganization))
		Expect(v.Equal(cf.Visibility{Type: cf.VisibilityOrganization, Orgs: orgs})).To(BeTrue())
		Expect(v.Orgs).To(ConsistOf(cf.Org{GUID: a.GUID, Name: "alpha"}, cf.Org{GUID: b.GUID, Name: "beta"}))
		other := planGUIDs(c, "blacksmith")[1]
		v, err = admin.PlanVisibility(ctxFor(5*time.Second), other)
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Type).To(Equal(cf.VisibilityPublic), "the other plan is left alone")

		Expect(admin.SetPlanVisibility(ctxFor(5*time.Second), plan, cf.Visibility{Type: cf.VisibilityPublic})).To(Succeed())
		v, err = admin.PlanVisibility(ctxFor(5*time.Second), plan)
		Expect(err).NotTo(HaveOccurred())
		Expect(v).To(Equal(cf.Visibility{Type: cf.VisibilityPublic}))
	})

	It("refuses a visibility it would send wrong before sending it", func() {
		for _, v := range []cf.Visibility{{Type: cf.VisibilityOrganization}, {Type: cf.VisibilityPublic, Orgs: []cf.Org{{GUID: "x"}}}, {Type: "space"}} {
			Expect(admin.SetPlanVisibility(ctxFor(5*time.Second), "p", v)).NotTo(Succeed())
		}
		Expect(c.Requests()).To(BeZero())
	})

	It("deletes an instance through the Cloud Controller; one that is gone is ErrNotFound", func() {
		err := admin.DeleteServiceInstance(ctxFor(5*time.Second), "no-such")
		Expect(err).To(MatchError(cf.ErrNotFound))
	})
})
