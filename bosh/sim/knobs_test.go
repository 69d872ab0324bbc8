package sim_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("knobs", func() {
	var (
		d *sim.Director
		c *client
	)
	BeforeEach(func() {
		d = start(sim.Options{TaskDuration: -1})
		c = newClient(d)
	})

	elapsed := func(f func()) time.Duration {
		t0 := time.Now()
		f()
		return time.Since(t0)
	}

	It("adds latency to every request but the admin API", func() {
		// Margins are wide on purpose: these check which requests wait, not how fast anything is.
		d.Knobs().SetLatency(time.Second)
		Expect(elapsed(func() { c.get("/info") })).To(BeNumerically(">=", time.Second))
		Expect(elapsed(func() { c.get("/_sim/stats") })).To(BeNumerically("<", 500*time.Millisecond))
		d.Knobs().SetLatency(0)
		Expect(elapsed(func() { c.get("/info") })).To(BeNumerically("<", 500*time.Millisecond))
	})

	It("stops waiting when the client gives up", func() {
		d.Knobs().SetLatency(time.Hour)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, d.URL()+"/info", nil)
		_, err := http.DefaultClient.Do(req)
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Eventually(func() int { return d.Stats().Active }).Should(Equal(0))
	})

	It("fails the requests of one endpoint and method with an empty 500", func() {
		Expect(d.Faults().Inject(sim.Failure{Endpoint: "/deployments/:name", Method: "GET"})).To(Succeed())
		Expect(d.PutDeployment(redisManifest("r1", "1"))).To(Succeed())
		r := c.get("/deployments/r1")
		Expect(r.status).To(Equal(http.StatusInternalServerError))
		Expect(r.body).To(BeEmpty())
		Expect(c.get("/deployments").status).To(Equal(http.StatusOK))
		Expect(c.get("/deployments/r1/vms").status).To(Equal(http.StatusOK))
		Expect(d.PutDeployment(redisManifest("other", "1"))).To(Succeed())
		Expect(c.do(http.MethodDelete, "/deployments/other", nil).status).To(Equal(http.StatusFound))
		d.Faults().Clear()
		Expect(c.get("/deployments/r1").status).To(Equal(http.StatusOK))
	})

	It("fails only the next Count requests with the status asked", func() {
		Expect(d.Faults().Inject(sim.Failure{Endpoint: "GET /deployments", Status: http.StatusServiceUnavailable, Count: 2})).To(Succeed())
		Expect([]int{c.get("/deployments").status, c.get("/deployments").status, c.get("/deployments").status}).
			To(Equal([]int{503, 503, 200}))
		Expect(d.Faults().List()).To(BeEmpty())
	})

	It("fails about the share of requests asked", func() {
		Expect(d.Faults().Inject(sim.Failure{Rate: 0.3})).To(Succeed())
		failed := 0
		for range 300 {
			if c.get("/info").status == http.StatusInternalServerError {
				failed++
			}
		}
		Expect(failed).To(BeNumerically("~", 90, 45))
	})

	DescribeTable("refuses a failure it cannot apply as asked, naming what is wrong",
		func(f sim.Failure, problem string) {
			err := d.Faults().Inject(f)
			Expect(err).To(MatchError(sim.ErrBadOptions))
			Expect(err).To(MatchError(ContainSubstring(problem)))
			Expect(d.Faults().List()).To(BeEmpty())
			Expect(c.get("/info").status).To(Equal(http.StatusOK))
		},
		Entry("a status no server can send", sim.Failure{Status: 42}, "status 42 is not between 200 and 599"),
		Entry("a rate above 1", sim.Failure{Rate: 2}, "rate 2 is not between 0 and 1"),
		Entry("a negative rate", sim.Failure{Rate: -0.5}, "rate -0.5 is not between 0 and 1"),
		Entry("a negative count", sim.Failure{Count: -1}, "count -1 is negative"),
		Entry("a negative delay", sim.Failure{Delay: -time.Second}, "delay -1s is negative"),
	)

	It("slows down answers without failing them", func() {
		Expect(d.Faults().Inject(sim.Failure{Endpoint: "/info", Delay: time.Second})).To(Succeed())
		var r reply
		Expect(elapsed(func() { r = c.get("/info") })).To(BeNumerically(">=", time.Second))
		Expect(r.status).To(Equal(http.StatusOK))
		Expect(elapsed(func() { c.get("/deployments") })).To(BeNumerically("<", 500*time.Millisecond))
	})

	It("counts requests per route template, and tasks, until reset", func() {
		Expect(d.PutDeployment(redisManifest("r1", "1"))).To(Succeed())
		c.get("/deployments/r1")
		c.get("/deployments/r1")
		c.get("/deployments")
		c.anonymous().get("/nope")
		c.waitTask(c.deploy(redisManifest("r2", "1")))
		s := d.Stats()
		Expect(s.Requests).To(HaveKeyWithValue("GET /deployments/:name", 2))
		Expect(s.Requests).To(HaveKeyWithValue("GET /deployments", 1))
		Expect(s.Requests).To(HaveKeyWithValue("POST /deployments", 1))
		Expect(s.Requests).To(HaveKeyWithValue("GET (unknown)", 1))
		Expect(s.Requests).To(HaveKey("GET /tasks/:id"))
		Expect(s.Tasks).To(Equal(1))
		Expect(s.TaskStates).To(Equal(map[string]int{"done": 1}))
		Expect(s.Deployments).To(Equal(2))

		d.ResetStats()
		s = d.Stats()
		Expect(s.Requests).To(BeEmpty())
		Expect(s.Tasks).To(BeZero())
		Expect(s.Deployments).To(Equal(2))
	})
})

var _ = It("injects Options.Failures from the start", func() {
	d := start(sim.Options{Failures: []sim.Failure{{Endpoint: "/info", Status: http.StatusTeapot}}})
	Expect(newClient(d).get("/info").status).To(Equal(http.StatusTeapot))
})
