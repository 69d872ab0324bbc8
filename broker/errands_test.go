package broker_test

import (
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/broker"
)

// errandEnv is a broker whose plan redis-small runs the post-deploy errands
// names (colocated jobs of its manifest, the redis job among them), on a
// Director whose errand runs end as outcomes say.
func errandEnv(names []string, outcomes ...sim.ErrandOutcome) *env {
	GinkgoHelper()
	return lifecycleEnv(names, nil, outcomes...)
}

// lifecycleEnv is errandEnv with pre-delete errands too.
func lifecycleEnv(postDeploy, preDelete []string, outcomes ...sim.ErrandOutcome) *env {
	GinkgoHelper()
	d, err := sim.New(sim.Options{TaskDuration: 50 * time.Millisecond, ErrandJobs: []string{"redis"}, Errands: outcomes})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(d.Close)
	e := &env{store: newStore(), director: d, client: newClient(d.URL())}
	return newEnvOn(e, func(o *broker.Options) {
		cat := testCatalog()
		cat.Services[0].Plans[0].PostDeployErrands = postDeploy
		cat.Services[0].Plans[0].PreDeleteErrands = preDelete
		o.Catalog = cat
	})
}

// errandRuns are the errand tasks the Director ran, in order.
func errandRuns(d *sim.Director) []string {
	var out []string
	for _, t := range d.TaskLog() {
		if strings.HasPrefix(t.Description, "run errand") {
			out = append(out, t.Description+": "+t.State)
		}
	}
	return out
}

var _ = Describe("post-deploy errands (plan.yml lifecycle_errands.post_deploy)", func() {
	It("run after a provision's deploy; the operation succeeds once the last exits 0", func() {
		e := errandEnv([]string{"redis"})
		e.provision("pd-1", "redis-small", nil)
		e.eventuallyState("pd-1", "succeeded")
		_, _, desc := e.lastOperation("pd-1")
		Expect(desc).To(ContainSubstring("post-deploy errand redis"))
		Expect(errandRuns(e.director)).To(Equal([]string{"run errand redis from deployment redis-small-pd-1: done"}))
		rec := e.record("pd-1")
		Expect(rec.LastOperation.Errand).To(BeEmpty())
		Expect(rec.LastOperation.TaskID).NotTo(BeZero())
	})

	It("fail the operation at an errand that exits non-zero, quoting the end of its standard error, the deploy kept", func() {
		e := errandEnv([]string{"redis"}, sim.ErrandOutcome{Errand: "redis", ExitCode: 2,
			Stderr: strings.Repeat("noise\n", 200) + "smoke test: PING timed out\x1b[0m"})
		e.provision("pd-2", "redis-small", nil)
		e.eventuallyState("pd-2", "failed")
		_, _, desc := e.lastOperation("pd-2")
		Expect(desc).To(ContainSubstring("post-deploy errand redis exited 2 on redis/"))
		Expect(desc).To(HaveSuffix("smoke test: PING timed out [0m"), "the tail, control characters made spaces")
		Expect(len(desc)).To(BeNumerically("<", 800))
		Expect(e.director.Stats().Deployments).To(Equal(1), "nothing rolled back: the deployment runs")
		a := e.request("GET", instancePath("pd-2")+"/last_operation", nil)
		Expect(a.Status).To(Equal(http.StatusOK))
	})

	It("fail the operation when the errand is not in the deployment (its task ends in error)", func() {
		e := errandEnv([]string{"no-such-errand"})
		e.provision("pd-3", "redis-small", nil)
		e.eventuallyState("pd-3", "failed")
		_, _, desc := e.lastOperation("pd-3")
		Expect(desc).To(ContainSubstring("post-deploy errand no-such-errand: BOSH task"))
		Expect(desc).To(ContainSubstring("ended error"))
	})
})

var _ = Describe("pre-delete errands (plan.yml lifecycle_errands.pre_delete)", func() {
	deprovision := func(e *env, id string) {
		GinkgoHelper()
		a := e.request("DELETE", instancePath(id)+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
	}

	It("run before a deprovision's deletion, which follows once the last exits 0", func() {
		e := lifecycleEnv(nil, []string{"redis"})
		e.provision("pre-1", "redis-small", nil)
		e.eventuallyState("pre-1", "succeeded")
		deprovision(e, "pre-1")
		Eventually(func() int {
			status, _, _ := e.lastOperation("pre-1")
			return status
		}).WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(http.StatusGone))
		Expect(errandRuns(e.director)).To(Equal([]string{"run errand redis from deployment redis-small-pre-1: done"}))
		Expect(e.director.Stats().Deployments).To(BeZero(), "deleted after the errand")
		log := e.director.TaskLog()
		Expect(log[len(log)-1].Description).To(Equal("delete deployment redis-small-pre-1"), "the deletion came after the errand")
	})

	It("stop the deletion at an errand that fails: the deprovision fails, the deployment and the records kept", func() {
		e := lifecycleEnv(nil, []string{"redis"}, sim.ErrandOutcome{Errand: "redis", ExitCode: 1, Stderr: "data not drained"})
		e.provision("pre-2", "redis-small", nil)
		e.eventuallyState("pre-2", "succeeded")
		deprovision(e, "pre-2")
		e.eventuallyState("pre-2", "failed")
		_, _, desc := e.lastOperation("pre-2")
		Expect(desc).To(ContainSubstring("deprovision failed: pre-delete errand redis exited 1"))
		Expect(desc).To(ContainSubstring("the deployment is kept"))
		Expect(desc).To(HaveSuffix("data not drained"))
		Expect(e.director.Stats().Deployments).To(Equal(1))
		Expect(e.record("pre-2")).NotTo(BeNil())
	})
})
