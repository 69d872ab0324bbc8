package broker_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/broker"
)

// The Director hiccups (a fault probe's storm of 503s): an operation asks
// again before it fails, and its failure names the Director.
var _ = Describe("a Director that hiccups", func() {
	var e *env

	BeforeEach(func() { e = newEnv() })

	It("is asked again: two 503s on POST /deployments, then one task and a provision that succeeds", func() {
		Expect(e.director.Faults().Inject(sim.Failure{Endpoint: "POST /deployments", Status: http.StatusServiceUnavailable, Count: 2})).To(Succeed())
		e.provision("h-1", "redis-small", nil)
		e.eventuallyState("h-1", "succeeded")
		Expect(e.director.Stats().Requests).To(HaveKeyWithValue("POST /deployments", 3))
		Expect(e.director.Stats().Tasks).To(Equal(1))
	})

	It("does not deploy twice when the Director took the request and its answer was lost (a 502 from a proxy in between)", func() {
		target, err := url.Parse(e.director.URL())
		Expect(err).NotTo(HaveOccurred())
		var lost atomic.Int32
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.ModifyResponse = func(res *http.Response) error {
			if res.Request.Method == http.MethodPost && res.Request.URL.Path == "/deployments" && lost.Add(1) == 1 {
				return fmt.Errorf("the answer is lost") // the proxy answers 502
			}
			return nil
		}
		front := httptest.NewServer(proxy)
		DeferCleanup(front.Close)
		e = newEnvOn(e, func(o *broker.Options) {
			c := newClient(front.URL)
			o.Directors = []broker.NamedDirector{{Director: c, Reader: c}}
		})
		e.provision("h-2", "redis-small", nil)
		e.eventuallyState("h-2", "succeeded")
		Expect(lost.Load()).To(BeEquivalentTo(1), "one POST /deployments reached the Director")
		Expect(e.director.Stats().Tasks).To(Equal(1), "its task was found by the operation's context id")
	})

	It("names the Director in an operation's failure when it keeps failing", func() {
		Expect(e.director.Faults().Inject(sim.Failure{Endpoint: "POST /deployments", Status: http.StatusBadGateway})).To(Succeed())
		e.provision("h-3", "redis-small", nil)
		e.eventuallyState("h-3", "failed")
		_, _, desc := e.lastOperation("h-3")
		Expect(desc).To(Equal(`provision failed: the BOSH Director "default" is failing (5 attempts); please try again later`))
		Expect(e.director.Stats().Tasks).To(BeZero())
	})

	It("binds through a storm of 503s on the VMs' addresses, and answers 503 naming the Director (not 500) when it lasts", func() {
		e.provisioned("h-4", "redis-small")
		bind := func(bid string) answer {
			return e.request("PUT", instancePath("h-4")+"/service_bindings/"+bid, map[string]any{"service_id": "redis", "plan_id": "redis-small"})
		}
		Expect(e.director.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name/vms", Status: http.StatusServiceUnavailable, Count: 3})).To(Succeed())
		a := bind("hb-1")
		Expect(a.Status).To(Equal(http.StatusCreated), a.Raw)
		Expect(a.Body["credentials"]).To(HaveKey("host"))

		Expect(e.director.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name/vms", Status: http.StatusServiceUnavailable})).To(Succeed())
		a = bind("hb-2")
		Expect(a.Status).To(Equal(http.StatusServiceUnavailable), a.Raw)
		Expect(a.Body["description"]).To(Equal(`the BOSH Director "default" is failing (5 attempts); try the binding again later`))
		Expect(e.request("GET", instancePath("h-4")+"/service_bindings/hb-2", nil).Status).To(Equal(http.StatusNotFound), "nothing stored")
	})

	It("deprovisions through two 500s on DELETE /deployments/:name", func() {
		e.provisioned("h-5", "redis-small")
		Expect(e.director.Faults().Inject(sim.Failure{Endpoint: "DELETE /deployments/:name", Status: http.StatusInternalServerError, Count: 2})).To(Succeed())
		a := e.request("DELETE", instancePath("h-5")+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Eventually(func() int { s, _, _ := e.lastOperation("h-5"); return s }).Should(Equal(http.StatusGone))
	})
})
