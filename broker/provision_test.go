package broker_test

import (
	"context"
	"net/http"
	"strings"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gopkg.in/yaml.v3"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/broker"
)

var _ = Describe("Provision", func() {
	var e *env
	ctx := context.Background()

	BeforeEach(func() { e = newEnv() })

	It("records the instance, its secrets and its manifest in Vault before answering 202, then deploys", func() {
		e.provision("i-1", "redis-small", map[string]any{"instances": 2, "tuning": map[string]any{"io_threads": 4}})

		r := e.record("i-1")
		Expect(r).NotTo(BeNil())
		Expect(r.ServiceID).To(Equal("redis"))
		Expect(r.PlanID).To(Equal("redis-small"))
		Expect(r.DeploymentName).To(Equal("redis-small-i-1"))
		Expect(r.OrganizationGUID).To(Equal("org-1"))
		Expect(r.SpaceGUID).To(Equal("space-1"))
		Expect(r.LastOperation).NotTo(BeNil())
		Expect(r.LastOperation.Type).To(Equal("provision"))
		Expect(r.LastOperation.State).To(Equal("in progress"))
		Expect(r.LastOperation.TaskID).To(BeNumerically(">", 0))
		Expect(r.LastOperation.ContextID).To(HavePrefix("blacksmith-provision-"))

		secrets, ok, err := e.store.Secret(ctx, "i-1/credentials")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(secrets["password"]).To(HaveLen(32))

		text, ok, err := e.store.Manifest(ctx, "i-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		var m struct {
			Name           string
			Properties     map[string]any
			InstanceGroups []struct {
				Instances int
				Jobs      []struct{ Properties map[string]any }
			} `yaml:"instance_groups"`
		}
		Expect(yaml.Unmarshal([]byte(text), &m)).To(Succeed())
		Expect(m.Name).To(Equal("redis-small-i-1"))
		Expect(m.Properties["blacksmith"]).To(HaveKeyWithValue("service_id", "redis"))
		Expect(m.Properties["blacksmith"]).To(HaveKeyWithValue("plan_id", "redis-small"))
		Expect(m.Properties["blacksmith"]).To(HaveKeyWithValue("instance_id", "i-1"))
		Expect(m.Properties["maxmemory"]).To(Equal("64mb"), "the template's properties stay")
		Expect(m.Properties["tuning"]).To(Equal(map[string]any{"io_threads": 4, "lazyfree": true}), "parameters are deep-merged")
		Expect(m.InstanceGroups[0].Instances).To(Equal(2), "the template sees .Params")
		Expect(m.InstanceGroups[0].Jobs[0].Properties["password"]).To(Equal(secrets["password"]), "the template sees .Secrets")

		e.eventuallyState("i-1", "succeeded")
		Expect(e.record("i-1").LastOperation.State).To(Equal("succeeded"))
		_, err = e.client.Manifest(ctx, "redis-small-i-1")
		Expect(err).NotTo(HaveOccurred(), "the Director has the deployment")
		Expect(metric(e.registry, "blacksmith_broker_operations_total", map[string]string{"type": "provision", "state": "succeeded"})).To(Equal(1.0))
	})

	It("answers an identical repeat 202 while in progress and 200 once done, a different one 409", func() {
		e.director.Knobs().SetTaskDuration(2e9)
		body := provisionBody("redis-small", map[string]any{"a": 1})
		Expect(e.request("PUT", instancePath("i-2")+"?accepts_incomplete=true", body).Status).To(Equal(http.StatusAccepted))
		Expect(e.request("PUT", instancePath("i-2")+"?accepts_incomplete=true", body).Status).To(Equal(http.StatusAccepted))
		e.eventuallyState("i-2", "succeeded")
		Expect(e.request("PUT", instancePath("i-2")+"?accepts_incomplete=true", body).Status).To(Equal(http.StatusOK))

		other := provisionBody("redis-small", map[string]any{"a": 2})
		a := e.request("PUT", instancePath("i-2")+"?accepts_incomplete=true", other)
		Expect(a.Status).To(Equal(http.StatusConflict))
		otherPlan := provisionBody("redis-large", map[string]any{"a": 1})
		Expect(e.request("PUT", instancePath("i-2")+"?accepts_incomplete=true", otherPlan).Status).To(Equal(http.StatusConflict))
	})

	It("refuses clients that do not accept asynchronous operations with 422 AsyncRequired", func() {
		a := e.request("PUT", instancePath("i-3"), provisionBody("redis-small", nil))
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.Body).To(HaveKeyWithValue("error", "AsyncRequired"))
		Expect(e.record("i-3")).To(BeNil())
	})

	It("refuses a plan of another service and parameters that are not an object with 400", func() {
		body := provisionBody("redis-small", nil)
		body["service_id"] = "memo"
		a := e.request("PUT", instancePath("i-4")+"?accepts_incomplete=true", body)
		Expect(a.Status).To(Equal(http.StatusBadRequest))
		Expect(a.Body["description"]).To(ContainSubstring("does not belong"))

		body = provisionBody("redis-small", nil)
		body["parameters"] = []int{1, 2}
		Expect(e.request("PUT", instancePath("i-4")+"?accepts_incomplete=true", body).Status).To(Equal(http.StatusBadRequest))

		body = provisionBody("redis-small", nil)
		body["plan_id"] = "nope"
		Expect(e.request("PUT", instancePath("i-4")+"?accepts_incomplete=true", body).Status).To(Equal(http.StatusBadRequest))
		Expect(e.record("i-4")).To(BeNil())
	})

	It("never lets two concurrent provisions take the last slot of a plan, and enforces the service limit", func() {
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				defer GinkgoRecover()
				id := "c-" + string(rune('a'+i))
				statuses[i] = e.request("PUT", instancePath(id)+"?accepts_incomplete=true", provisionBody("redis-small", nil)).Status
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
		Expect(accepted).To(Equal(2), "plan small allows 2 instances")
		idx, err := e.store.Index(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(idx.Records).To(HaveLen(2))
		Expect(metric(e.registry, "blacksmith_broker_limit_refusals_total", map[string]string{"limit": "plan"})).To(Equal(float64(n - 2)))

		e.provision("l-1", "redis-large", nil)
		a := e.request("PUT", instancePath("l-2")+"?accepts_incomplete=true", provisionBody("redis-large", nil))
		Expect(a.Status).To(Equal(http.StatusUnprocessableEntity))
		Expect(a.Body["description"]).To(ContainSubstring(`service "redis" allows at most 3`))
	})

	It("refuses with 503 and records nothing when the Director cannot preview the deploy", func() {
		e = newEnv(func(o *broker.Options) {
			unreachable := newClient("http://127.0.0.2:1")
			o.Directors = []broker.NamedDirector{{Director: unreachable, Reader: unreachable}}
		})
		a := e.request("PUT", instancePath("u-1")+"?accepts_incomplete=true", provisionBody("redis-small", nil))
		Expect(a.Status).To(Equal(http.StatusServiceUnavailable), a.Raw)
		Expect(a.Body["description"]).To(Equal(`provision refused: the BOSH Director "default" could not preview it; nothing was changed, please try again later`))
		Expect(a.Raw).NotTo(ContainSubstring("127.0.0.2"), "the operator's detail stays in the log")
		rec, err := e.store.Record(ctx, "u-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(rec).To(BeNil())
	})

	It("reports a failed BOSH task as failed, naming the task", func() {
		e.director.FailNextTask("redis-small-f-1")
		e.provision("f-1", "redis-small", nil)
		e.eventuallyState("f-1", "failed")
		_, _, desc := e.lastOperation("f-1")
		Expect(desc).To(MatchRegexp(`provision failed: BOSH task \d+ ended error`))
		Expect(e.record("f-1").LastOperation.State).To(Equal("failed"))
	})

	It("reports a deploy the Director refuses for its cloud config as failed, with the Director's message", func() {
		e.director.SetCloudConfig(strings.Replace(sim.DefaultCloudConfig, "vm_types:\n- name: default\n", "vm_types:\n- name: renamed\n", 1))
		e.provision("f-3", "redis-small", nil)
		e.eventuallyState("f-3", "failed")
		_, _, desc := e.lastOperation("f-3")
		Expect(desc).To(MatchRegexp(`^provision failed: BOSH task \d+ ended error: Instance group '\w+' references an unknown vm type 'default'$`))
	})

	It("retries a failed provision when the same request comes again", func() {
		e.director.FailNextTask("redis-small-f-2")
		e.provision("f-2", "redis-small", nil)
		e.eventuallyState("f-2", "failed")
		e.provision("f-2", "redis-small", nil)
		e.eventuallyState("f-2", "succeeded")
	})
})

var _ = Describe("A provision that succeeded", func() {
	It("is backed up, so that the reconciler can restore the broker's fields", func() {
		e := newEnv()
		e.provisioned("bk-1", "redis-small")
		backups, err := e.store.Backups(context.Background(), "bk-1")
		Expect(err).NotTo(HaveOccurred())
		Expect(backups).To(HaveLen(1))
	})
})
