package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/broker"
)

var _ = Describe("limits across brokers sharing one Vault (SharedLimits)", func() {
	It("let exactly 2 of 8 concurrent provisions for a plan limit of 2 through, spread over 3 brokers", func() {
		e := newEnv()
		var servers []*httptest.Server
		for i := range 3 {
			b, err := broker.New(broker.Options{
				Catalog: testCatalog(), Directors: []broker.NamedDirector{{Director: e.client, Reader: e.client}}, Store: e.store,
				Username: brokerUser, Password: brokerPass, Metrics: broker.NewMetrics(prometheus.NewRegistry()),
				Logger: testLogger(), SharedLimits: e.store.Leases, HolderID: fmt.Sprintf("vm-%d", i),
			})
			Expect(err).NotTo(HaveOccurred())
			s := httptest.NewServer(b.Handler())
			DeferCleanup(s.Close)
			servers = append(servers, s)
		}
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				defer GinkgoRecover()
				via := &env{server: servers[i%len(servers)]}
				statuses[i] = via.request("PUT", instancePath(fmt.Sprintf("s-%d", i))+"?accepts_incomplete=true",
					provisionBody("redis-small", nil)).Status
			})
		}
		wg.Wait()
		Expect(statuses).To(HaveEach(BeElementOf(http.StatusAccepted, http.StatusUnprocessableEntity)))
		accepted := 0
		for _, s := range statuses {
			if s == http.StatusAccepted {
				accepted++
			}
		}
		Expect(accepted).To(Equal(2))
		idx, err := e.store.Index(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(idx.Records).To(HaveLen(2))
	})
})

var _ = Describe("one instance id provisioned on several brokers at once", func() {
	It("is provisioned once: one deploy, one operation (the record is written with check-and-set); the others are told of it or refused", func() {
		e := newEnv()
		var servers []*httptest.Server
		for i := range 3 {
			b, err := broker.New(broker.Options{
				Catalog: testCatalog(), Directors: []broker.NamedDirector{{Director: e.client, Reader: e.client}}, Store: e.store,
				Username: brokerUser, Password: brokerPass, Metrics: broker.NewMetrics(prometheus.NewRegistry()),
				Logger: testLogger(), HolderID: fmt.Sprintf("vm-%d", i),
			})
			Expect(err).NotTo(HaveOccurred())
			s := httptest.NewServer(b.Handler())
			DeferCleanup(s.Close)
			servers = append(servers, s)
		}
		for round := range 3 { // the test catalog's service allows 3 instances
			id := fmt.Sprintf("same-%d", round)
			answers := make([]answer, 6)
			var wg sync.WaitGroup
			for i := range answers {
				wg.Go(func() {
					defer GinkgoRecover()
					via := &env{server: servers[i%len(servers)]}
					answers[i] = via.request("PUT", instancePath(id)+"?accepts_incomplete=true", provisionBody("redis-large", nil))
				})
			}
			wg.Wait()
			operations := map[any]bool{}
			for _, a := range answers {
				Expect(a.Status).To(BeElementOf(http.StatusAccepted, http.StatusConflict), a.Raw)
				if a.Status == http.StatusAccepted {
					operations[a.Body["operation"]] = true
				}
			}
			Expect(operations).To(HaveLen(1), "round %d: every 202 names the one operation", round)
			Expect(e.director.Stats().Tasks).To(Equal(round+1), "round %d: one deploy", round)
		}
	})
})

var _ = Describe("the leases an operation leaves in Vault (SharedLimits)", func() {
	// leaseDocs lists the lease documents under the mount.
	leaseDocs := func(e *env) []string {
		GinkgoHelper()
		code, body, err := vaultServer.Do("LIST", "/v1/"+e.store.Mount()+"/metadata/blacksmith/leases", "")
		Expect(err).NotTo(HaveOccurred())
		if code == http.StatusNotFound {
			return nil
		}
		Expect(code).To(Equal(http.StatusOK), string(body))
		var list struct {
			Data struct{ Keys []string } `json:"data"`
		}
		Expect(json.Unmarshal(body, &list)).To(Succeed())
		return list.Data.Keys
	}

	It("takes none for a refused provision, and deletes a deprovisioned instance's", func() {
		e := newEnv()
		a := e.vm("vm-a", e.store)
		a.provisioned("s-1", "redis-small")
		a.provisioned("s-2", "redis-small")
		Expect(leaseDocs(e)).To(ConsistOf("instance-s-1", "instance-s-2", "broker-limits"))

		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				defer GinkgoRecover()
				for i := w; i < 1000; i += 4 {
					r := a.request("PUT", instancePath(fmt.Sprintf("refused-%d", i))+"?accepts_incomplete=true", provisionBody("redis-small", nil))
					Expect(r.Status).To(Equal(http.StatusUnprocessableEntity), r.Raw)
				}
			})
		}
		wg.Wait()
		Expect(leaseDocs(e)).To(ConsistOf("instance-s-1", "instance-s-2", "broker-limits"), "1,000 refusals, no document")

		del := a.request("DELETE", instancePath("s-1")+"?service_id=redis&plan_id=redis-small&accepts_incomplete=true", nil)
		Expect(del.Status).To(Equal(http.StatusAccepted), del.Raw)
		a.eventuallyState("s-1", "succeeded")
		Expect(a.record("s-1")).To(BeNil())
		Expect(leaseDocs(e)).To(ConsistOf("instance-s-2", "broker-limits"), "the instance's lease went with it")
	})
})
