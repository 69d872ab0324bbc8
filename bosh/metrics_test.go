package bosh_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

const (
	requestsTotal = "blacksmith_bosh_requests_total"
	tasksTotal    = "blacksmith_bosh_tasks_created_total"
)

// req are the labels of a requests_total series of director "lab".
func req(method, endpoint, class string) map[string]string {
	return map[string]string{"director": "lab", "method": method, "endpoint": endpoint, "code_class": class}
}

var _ = Describe("Metrics", func() {
	var (
		reg *prometheus.Registry
		d   *sim.Director
		c   *bosh.Client
	)

	BeforeEach(func() {
		reg = prometheus.NewRegistry()
		d = startDirector(sim.Options{Auth: sim.AuthUAA, TaskDuration: -1})
		c = newClient(d, func(o *bosh.Options) { o.Name = "lab"; o.Metrics = bosh.NewMetrics(reg) })
	})

	It("starts every series of a director at 0", func() {
		Expect(counter(reg, tasksTotal, map[string]string{"director": "lab"})).To(BeZero())
		Expect(counter(reg, requestsTotal, req("GET", "/deployments", "2xx"))).To(BeZero())
		Expect(counter(reg, requestsTotal, req("POST", "/oauth/token", "4xx"))).To(BeZero())
		Expect(counter(reg, requestsTotal, req("GET", "/tasks/:id", "error"))).To(BeZero())
		Expect(counter(reg, requestsTotal, req("GET", "/events", "2xx"))).To(BeZero())
	})

	It("counts requests by route template and status class, and task creations", func() {
		ctx := ctxFor(10 * time.Second)
		Expect(d.PutDeployment(manifest("redis-m"))).To(Succeed())
		_, err := c.Manifest(ctx, "redis-m")
		Expect(err).NotTo(HaveOccurred())
		_, err = c.Manifest(ctx, "no-such-deployment")
		Expect(err).To(MatchError(bosh.ErrDeploymentNotFound))
		task, err := c.Deploy(ctx, []byte(manifest("redis-n")))
		Expect(err).NotTo(HaveOccurred())
		_, err = c.DeleteDeployment(ctx, "redis-n", false)
		Expect(err).NotTo(HaveOccurred())
		_, err = c.Task(ctx, task.ID)
		Expect(err).NotTo(HaveOccurred())

		Expect(counter(reg, requestsTotal, req("GET", "/info", "2xx"))).To(Equal(1.0))
		Expect(counter(reg, requestsTotal, req("POST", "/oauth/token", "2xx"))).To(Equal(1.0))
		Expect(counter(reg, requestsTotal, req("GET", "/deployments/:name", "2xx"))).To(Equal(1.0))
		Expect(counter(reg, requestsTotal, req("GET", "/deployments/:name", "4xx"))).To(Equal(1.0))
		Expect(counter(reg, requestsTotal, req("POST", "/deployments", "3xx"))).To(Equal(1.0))
		Expect(counter(reg, requestsTotal, req("DELETE", "/deployments/:name", "3xx"))).To(Equal(1.0))
		Expect(counter(reg, requestsTotal, req("GET", "/tasks/:id", "2xx"))).To(Equal(3.0))
		Expect(counter(reg, tasksTotal, map[string]string{"director": "lab"})).To(Equal(2.0))

		templates := []string{"/info", "/oauth/token", "/deployments", "/deployments/:name", "/deployments/:name/vms",
			"/deployments/:name/instances", "/deployments/:name/diff", "/deployments/:name/jobs/:job", "/deployments/:name/errands/:errand/runs", "/tasks", "/tasks/:id", "/tasks/:id/output", "/events", "/releases", "/stemcells"}
		families, err := reg.Gather()
		Expect(err).NotTo(HaveOccurred())
		for _, f := range families {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					Expect(l.GetValue()).NotTo(ContainSubstring("redis-"), "no deployment name in a label")
					if l.GetName() == "endpoint" {
						Expect(l.GetValue()).To(BeElementOf(templates))
					}
				}
			}
		}
	})

	It("counts a request without an answer as an error, and 5xx answers", func() {
		ctx := ctxFor(10 * time.Second)
		_, err := c.Deployments(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(d.Faults().Inject(sim.Failure{Endpoint: "GET /deployments", Status: 503, Count: 1})).To(Succeed())
		_, err = c.Deployments(ctx)
		Expect(err).To(MatchError(ContainSubstring("status 503")))
		Expect(d.Close()).To(Succeed())
		_, err = c.Deployments(ctx)
		Expect(err).To(HaveOccurred())
		Expect(counter(reg, requestsTotal, req("GET", "/deployments", "2xx"))).To(Equal(1.0))
		Expect(counter(reg, requestsTotal, req("GET", "/deployments", "5xx"))).To(Equal(1.0))
		Expect(counter(reg, requestsTotal, req("GET", "/deployments", "error"))).To(Equal(1.0))
	})

	It("keeps named clients apart on one set of metrics, registered once", func() {
		again := bosh.NewMetrics(reg) // the registered collectors are reused
		other := newClient(d, func(o *bosh.Options) { o.Name = "other"; o.Metrics = again })
		ctx := ctxFor(10 * time.Second)
		_, err := other.Deployments(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(counter(reg, requestsTotal, map[string]string{"director": "other", "method": "GET", "endpoint": "/deployments", "code_class": "2xx"})).To(Equal(1.0))
		Expect(counter(reg, requestsTotal, req("GET", "/deployments", "2xx"))).To(BeZero())
	})
})
