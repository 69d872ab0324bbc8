package sim_test

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/cf/sim"
)

var _ = Describe("knobs, failures, stats and concurrency", func() {
	It("injects a status for a route a given number of times", func() {
		f := newFixture()
		Expect(f.cc.Knobs().InjectFailure(sim.Failure{Endpoint: "GET /v3/service_instances", Status: 503, Count: 2})).To(Succeed())
		for range 2 {
			status, body := get(f.cc, "/v3/service_instances", f.tok)
			Expect(status).To(Equal(http.StatusServiceUnavailable))
			Expect(cfError(body)["title"]).To(Equal("CF-ServiceUnavailable"))
		}
		status, _ := get(f.cc, "/v3/service_instances", f.tok)
		Expect(status).To(Equal(http.StatusOK))
		Expect(f.cc.Knobs().Failures()).To(BeEmpty())
	})

	It("cuts a page short: the client sees a truncated body", func() {
		f := newFixture()
		Expect(f.cc.Knobs().InjectFailure(sim.Failure{Endpoint: "/v3/service_instances", CutShort: true, Count: 1})).To(Succeed())
		req, _ := http.NewRequest("GET", f.cc.URL()+"/v3/service_instances", nil)
		req.Header.Set("Authorization", "bearer "+f.tok)
		res, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer res.Body.Close()
		_, err = io.ReadAll(res.Body)
		Expect(err).To(MatchError(io.ErrUnexpectedEOF))
	})

	It("sets knobs and failures over /_sim/config, counts requests per route and resets", func() {
		f := newFixture()
		res, err := http.Post(f.cc.URL()+"/_sim/config", "application/json",
			strings.NewReader(`{"latency_ms": 1, "failures": [{"endpoint": "/v3/service_plans", "status": 500, "count": 1}]}`))
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusOK))
		status, body := get(f.cc, "/v3/service_plans", f.tok)
		Expect(status).To(Equal(http.StatusInternalServerError))
		Expect(cfError(body)["code"]).To(BeNumerically("==", 10001))
		get(f.cc, "/v3/service_instances/guid-1", f.tok)
		get(f.cc, "/v3/service_instances/guid-2", f.tok)

		_, stats := get(f.cc, "/_sim/stats", "")
		Expect(stats["requests"]).To(HaveKeyWithValue("GET /v3/service_instances/:guid", 2.0))
		Expect(stats["requests"]).To(HaveKeyWithValue("GET /v3/service_plans", 1.0))
		Expect(stats["requests"]).To(HaveKeyWithValue("POST /uaa/oauth/token", 1.0))

		res, err = http.Post(f.cc.URL()+"/_sim/config", "application/json", strings.NewReader(`{"latency_ms": -1}`))
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusBadRequest))

		res, err = http.Post(f.cc.URL()+"/_sim/reset", "", nil)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(f.cc.Stats().Requests).To(BeEmpty())
	})

	It("adds an instance by its plan's catalog id and its org and space names over /_sim/service_instances", func() {
		f := newFixture()
		post := func(body string) (int, map[string]any) {
			req, _ := http.NewRequest(http.MethodPost, f.cc.URL()+"/_sim/service_instances", strings.NewReader(body))
			return do(req)
		}
		status, body := post(`{"guid": "guid-new", "name": "lost", "plan": "redis-large", "org": "org-1", "space": "space-1", "state": "in progress"}`)
		Expect(status).To(Equal(http.StatusCreated))
		Expect(body).To(HaveKeyWithValue("guid", "guid-new"))
		in, ok := f.cc.Foundation().Instance("guid-new")
		Expect(ok).To(BeTrue())
		Expect(in.PlanGUID).To(Equal(f.large.GUID))
		Expect(in.SpaceGUID).To(Equal(f.space1.GUID), "the existing space of that name")
		Expect(in.LastOperation.Type).To(Equal(sim.OpCreate))
		Expect(in.LastOperation.State).To(Equal(sim.StateInProgress))

		status, _ = post(`{"name": "x", "plan": "redis-small"}`)
		Expect(status).To(Equal(http.StatusCreated), "sample-org and sample-space made")
		status, _ = post(`{"name": "x", "plan": "no-such-plan"}`)
		Expect(status).To(Equal(http.StatusNotFound))
		status, _ = post(`{"name": "x", "plan": "redis-small", "surprise": 1}`)
		Expect(status).To(Equal(http.StatusBadRequest))
		status, _ = post(`{"guid": "guid-new", "name": "again", "plan": "redis-small"}`)
		Expect(status).To(Equal(http.StatusBadRequest), "a guid taken")
	})

	It("adds latency", func() {
		f := newFixture()
		f.cc.Knobs().SetLatency(150 * time.Millisecond)
		began := time.Now()
		get(f.cc, "/v3/service_brokers", f.tok)
		Expect(time.Since(began)).To(BeNumerically(">=", 150*time.Millisecond))
	})

	It("rate-limits with X-RateLimit headers and 429 CF-RateLimitExceeded", func() {
		f := newFixture()
		f.cc.Knobs().SetRateLimit(2, time.Minute)
		req, _ := http.NewRequest("GET", f.cc.URL()+"/v3/service_brokers", nil)
		req.Header.Set("Authorization", "bearer "+f.tok)
		var last *http.Response
		for range 3 {
			res, err := http.DefaultClient.Do(req)
			Expect(err).NotTo(HaveOccurred())
			res.Body.Close()
			Expect(res.Header.Get("X-RateLimit-Limit")).To(Equal("2"))
			Expect(res.Header.Get("X-RateLimit-Reset")).NotTo(BeEmpty())
			last = res
		}
		Expect(last.StatusCode).To(Equal(http.StatusTooManyRequests))
		Expect(last.Header.Get("X-RateLimit-Remaining")).To(Equal("0"))
		Expect(last.Header.Get("Retry-After")).NotTo(BeEmpty())
	})

	It("serves concurrent readers while state changes (run with -race)", func() {
		cc := start(sim.Options{})
		_, err := cc.Foundation().Seed("blacksmith", 500)
		Expect(err).NotTo(HaveOccurred())
		tok := mustToken(cc)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer GinkgoRecover()
				defer wg.Done()
				for range 10 {
					status, _ := get(cc, "/v3/service_instances?per_page=100&page=2", tok)
					Expect(status).To(Equal(http.StatusOK))
				}
				in, _ := cc.Foundation().Seed("blacksmith", 5)
				cc.Foundation().RemoveInstance(in[0].GUID)
				Expect(cc.Foundation().SetLastOperation(in[1].GUID, sim.LastOperation{Type: "update", State: "in progress"})).To(Succeed())
				_ = i
			}()
		}
		wg.Wait()
		Expect(cc.Foundation().InstanceCount()).To(Equal(500 + 8*4))
		Expect(cc.Stats().Requests["GET /v3/service_instances"]).To(Equal(80))
	})

	It("answers unknown routes 404 CF-NotFound", func() {
		f := newFixture()
		status, body := get(f.cc, "/v3/routes", f.tok)
		Expect(status).To(Equal(http.StatusNotFound))
		Expect(cfError(body)["title"]).To(Equal("CF-NotFound"))
	})
})
