package broker_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("SettleOperation", func() {
	var e *env
	ctx := context.Background()
	settle := func(id string) (string, string, error) { return e.broker.SettleOperation(ctx, id) }

	BeforeEach(func() { e = newEnv() })

	It("records the failure of a task that failed in the Director, which the platform's next poll answers", func() {
		e.director.FailNextTask("redis-small-s-1")
		e.provision("s-1", "redis-small", nil)
		task := e.record("s-1").LastOperation.TaskID

		var desc string
		Eventually(func() string {
			state, d, err := settle("s-1")
			Expect(err).NotTo(HaveOccurred())
			desc = d
			return state
		}).WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal("failed"))
		Expect(desc).To(ContainSubstring("provision failed: BOSH task " + strconv.Itoa(task)))
		op := e.record("s-1").LastOperation
		Expect(op.State).To(Equal("failed"), "recorded before the platform asked")
		Expect(op.Description).To(Equal(desc))

		status, state, platformDesc := e.lastOperation("s-1")
		Expect(status).To(Equal(http.StatusOK))
		Expect(state).To(Equal("failed"))
		Expect(platformDesc).To(Equal(desc))
		events := history(e, "s-1")
		Expect(kinds(events)).To(Equal([]string{"provision", "operation_failed"}))
		Expect(events[1].Details).To(Equal(map[string]string{"type": "provision", "task_id": strconv.Itoa(task)}))
		Expect(events[1].Message).To(Equal(desc))
	})

	It("fails, with a reason, an operation without a task or a deployment past LostTaskGrace", func() {
		putRecord(e, "s-2", &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-s-2",
			LastOperation: inProgress("blacksmith-provision-lost", 0, time.Now().Add(-time.Hour))})
		state, desc, err := settle("s-2")
		Expect(err).NotTo(HaveOccurred())
		Expect(state).To(Equal("failed"))
		Expect(desc).To(ContainSubstring("the BOSH Director has no task for it"))
		Expect(e.record("s-2").LastOperation.State).To(Equal("failed"))

		_, platformState, platformDesc := e.lastOperation("s-2")
		Expect(platformState).To(Equal("failed"))
		Expect(platformDesc).To(Equal(desc))
		events := history(e, "s-2")
		Expect(kinds(events)).To(Equal([]string{"operation_failed"}))
		Expect(events[0].Message).To(Equal(desc))
	})

	It("answers in progress without writing anything while the task runs", func() {
		e.director.Knobs().SetTaskDuration(10 * time.Second)
		e.provision("s-3", "redis-small", nil)
		before, eventsBefore := e.record("s-3"), history(e, "s-3")

		state, desc, err := settle("s-3")
		Expect(err).NotTo(HaveOccurred())
		Expect(state).To(Equal("in progress"))
		Expect(desc).To(ContainSubstring("provision in progress (BOSH task " + strconv.Itoa(before.LastOperation.TaskID)))
		Expect(e.record("s-3")).To(Equal(before))
		Expect(history(e, "s-3")).To(Equal(eventsBefore))
	})

	It("answers in progress, with an error wrapping the Director's, when the Director cannot be reached", func() {
		e.director.Knobs().SetTaskDuration(10 * time.Second)
		e.provision("s-4", "redis-small", nil)
		before := e.record("s-4")
		e.director.Faults().Inject(simFailure("/tasks/:id"))

		state, desc, err := settle("s-4")
		Expect(err).To(MatchError(broker.ErrDirectorUnavailable))
		var api *bosh.APIError
		Expect(errors.As(err, &api)).To(BeTrue(), err.Error())
		Expect(api.StatusCode).To(Equal(http.StatusServiceUnavailable))
		Expect(state).To(Equal("in progress"))
		Expect(desc).To(ContainSubstring("cannot be reached"))
		Expect(e.record("s-4")).To(Equal(before))
		_, platformState, platformDesc := e.lastOperation("s-4")
		Expect(platformState).To(Equal(state))
		Expect(platformDesc).To(Equal(desc))
	})

	It("completes a deprovision (succeeded), after which the instance is gone", func() {
		e.provisioned("s-5", "redis-small")
		a := e.request("DELETE", instancePath("s-5")+"?accepts_incomplete=true&service_id=redis&plan_id=redis-small", nil)
		Expect(a.Status).To(Equal(http.StatusAccepted))
		Eventually(func() string {
			state, _, err := settle("s-5")
			Expect(err).NotTo(HaveOccurred())
			return state
		}).WithTimeout(20 * time.Second).WithPolling(100 * time.Millisecond).Should(Equal("succeeded"))
		Expect(e.record("s-5")).To(BeNil())

		state, _, err := settle("s-5")
		Expect(err).NotTo(HaveOccurred())
		Expect(state).To(Equal(broker.OperationGone))
		Expect(kinds(history(e, "s-5"))).To(Equal([]string{"provision", "operation_succeeded", "deprovision", "operation_succeeded"}))
	})

	It("answers an operation that has ended as recorded, and an unknown instance as gone", func() {
		e.provisioned("s-6", "redis-small")
		state, desc, err := settle("s-6")
		Expect(err).NotTo(HaveOccurred())
		Expect(state).To(Equal("succeeded"))
		Expect(desc).To(ContainSubstring("provision succeeded"))

		state, _, err = settle("nobody")
		Expect(err).NotTo(HaveOccurred())
		Expect(state).To(Equal(broker.OperationGone))
	})

	It("fails, with Vault's error and no state, when the record cannot be read", func() {
		records := &failingRecords{}
		e = newEnv(func(o *broker.Options) { records.Store = o.Store; o.Store = records })
		records.failing.Store(true)
		state, desc, err := settle("s-7")
		Expect(err).To(MatchError(ContainSubstring("vault is unreachable")))
		Expect(state).To(BeEmpty())
		Expect(desc).To(BeEmpty())
	})
})

// failingRecords is the real store whose record reads fail while failing
// is set, as when Vault cannot be reached.
type failingRecords struct {
	broker.Store
	failing atomic.Bool
}

func (f *failingRecords) Record(ctx context.Context, id string) (*vault.Record, error) {
	if f.failing.Load() {
		return nil, errors.New("vault is unreachable")
	}
	return f.Store.Record(ctx, id)
}
