package broker_test

import (
	"context"
	"net/http"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// putRecord writes a record as a daemon that died mid-operation left it.
func putRecord(e *env, id string, r *vault.Record) {
	GinkgoHelper()
	_, err := e.store.Update(context.Background(), map[string]vault.Change{id: func(*vault.Record) (*vault.Record, error) {
		return r, nil
	}})
	Expect(err).NotTo(HaveOccurred())
}

func inProgress(contextID string, taskID int, started time.Time) *vault.Operation {
	return &vault.Operation{Type: "provision", State: "in progress", TaskID: taskID,
		ContextID: contextID, StartedAt: started.UTC().Format(time.RFC3339Nano)}
}

const bareManifest = `name: %s
releases: [{name: redis, version: "1"}]
stemcells: [{alias: default, os: ubuntu-jammy, version: "1"}]
instance_groups:
- {name: redis, instances: 1, azs: [z1], vm_type: default, stemcell: default, networks: [{name: default}], jobs: [{name: redis, release: redis}]}
`

var _ = Describe("LastOperation", func() {
	var e *env
	ctx := context.Background()

	BeforeEach(func() {
		e = newEnv(func(o *broker.Options) { o.LostTaskGrace = 500 * time.Millisecond })
	})

	It("answers 404 for an instance that never existed, 410 once a deprovision removed it (the spec, 2.16 on), and 404 for an unknown binding", func() {
		status, _, _ := e.lastOperation("nobody")
		Expect(status).To(Equal(http.StatusNotFound))
		e.provisioned("lo-gone", "redis-small")
		a := e.request("DELETE", instancePath("lo-gone")+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		Eventually(func() int { s, _, _ := e.lastOperation("lo-gone"); return s }).
			WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal(http.StatusGone))
		Expect(e.request("GET", instancePath("lo-gone")+"/service_bindings/nope/last_operation", nil).Status).To(Equal(http.StatusNotFound))
	})

	It("remembers a deletion as succeeded for RememberDeleted (the spec: SHOULD NOT forget an operation's state at once)", func() {
		e = newEnv(func(o *broker.Options) { o.RememberDeleted = time.Hour })
		e.provisioned("lo-kept", "redis-small")
		a := e.request("DELETE", instancePath("lo-kept")+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		Expect(a.Status).To(Equal(http.StatusAccepted), a.Raw)
		e.eventuallyState("lo-kept", "succeeded")
		Expect(e.record("lo-kept")).To(BeNil())
		status, state, desc := e.lastOperation("lo-kept")
		Expect([]any{status, state, desc}).To(Equal([]any{http.StatusOK, "succeeded", "deprovision succeeded: the instance is gone"}))
		Expect(e.request("GET", instancePath("lo-kept"), nil).Status).To(Equal(http.StatusNotFound))
	})

	It("finds a task whose id was never recorded by its context id, and records it", func() {
		task, err := e.client.Deploy(bosh.WithContextID(ctx, "blacksmith-provision-crashed"),
			[]byte(fmtManifest("redis-small-k-1")))
		Expect(err).NotTo(HaveOccurred())
		putRecord(e, "k-1", &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-k-1",
			LastOperation: inProgress("blacksmith-provision-crashed", 0, time.Now())})

		e.eventuallyState("k-1", "succeeded")
		Expect(e.record("k-1").LastOperation.TaskID).To(Equal(task.ID))
	})

	It("reports an operation whose task never reached the Director in progress, then failed after the grace period", func() {
		putRecord(e, "k-2", &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-k-2",
			LastOperation: inProgress("blacksmith-provision-lost", 0, time.Now())})
		_, state, _ := e.lastOperation("k-2")
		Expect(state).To(Equal("in progress"))
		e.eventuallyState("k-2", "failed")
		_, _, desc := e.lastOperation("k-2")
		Expect(desc).To(ContainSubstring("no task"))
		Expect(e.record("k-2").LastOperation.State).To(Equal("failed"))
	})

	It("reports a recorded task the Director does not know as failed at once", func() {
		putRecord(e, "k-3", &vault.Record{ServiceID: "redis", PlanID: "redis-small",
			LastOperation: inProgress("blacksmith-provision-x", 987654, time.Now())})
		_, state, _ := e.lastOperation("k-3")
		Expect(state).To(Equal("failed"))
	})

	It("answers succeeded for a record without an operation (rebuilt by the reconciler)", func() {
		putRecord(e, "k-4", &vault.Record{ServiceID: "redis", PlanID: "redis-small"})
		_, state, _ := e.lastOperation("k-4")
		Expect(state).To(Equal("succeeded"))
	})

	It("says in progress, not failed, while the Director cannot be reached", func() {
		e.director.Knobs().SetTaskDuration(10 * time.Second)
		e.provision("k-5", "redis-small", nil)
		e.director.Faults().Inject(simFailure("/tasks/:id"))
		_, state, desc := e.lastOperation("k-5")
		Expect(state).To(Equal("in progress"))
		Expect(desc).To(ContainSubstring("cannot be reached"))
	})
})
