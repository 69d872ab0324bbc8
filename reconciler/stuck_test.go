package reconciler_test

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pivotal-cf/brokerapi/v11/domain"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("broker operations stuck in progress", func() {
	It("are settled from the Director after stuck_operation_after, and the platform's next last_operation sees it", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.StuckOperationAfter = time.Hour }})
		ctx := context.Background()
		b, err := broker.New(broker.Options{Catalog: testCatalog, Directors: []broker.NamedDirector{{Director: e.bosh, Reader: e.bosh}},
			Store: e.store, Username: "u", Password: "p", Logger: testLogger()})
		Expect(err).NotTo(HaveOccurred())
		e.m = e.newManagerWith(func(o *reconciler.Options) { o.Operations = b })
		Expect(e.run(report.RunOptions{}).Created).To(Equal(2))

		// An update whose task ended long ago; nobody polled last_operation.
		done, lost, fresh := instanceID(e.names[0]), "0a0b0c0d-0000-4000-8000-00000000dead", instanceID(e.names[1])
		task, err := e.bosh.Deploy(ctx, []byte(e.manifest(e.names[0])))
		Expect(err).NotTo(HaveOccurred())
		task, err = e.bosh.WaitTask(ctx, task.ID, 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(task.State).To(Equal(bosh.TaskDone))
		long := time.Now().Add(-2 * time.Hour).UTC().Format(time.RFC3339)
		setOp := func(id, typ, started string, taskID int) {
			GinkgoHelper()
			_, err := e.store.Update(ctx, map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
				if cur == nil {
					cur = &vault.Record{ServiceID: "redis", PlanID: "redis-small", Created: time.Now().Add(-3 * time.Hour).Unix()}
				}
				cur.LastOperation = &vault.Operation{Type: typ, State: vault.OperationInProgress, TaskID: taskID,
					StartedAt: started, ContextID: "ctx-" + id}
				return cur, nil
			}})
			Expect(err).NotTo(HaveOccurred())
		}
		setOp(done, "update", long, task.ID)
		setOp(lost, "provision", long, 0)                                     // no task, no deployment
		setOp(fresh, "update", time.Now().UTC().Format(time.RFC3339), 999999) // recent: left alone

		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Settled).To(ConsistOf(
			And(HaveField("InstanceID", done), HaveField("State", "succeeded")),
			And(HaveField("InstanceID", lost), HaveField("State", "failed"), HaveField("Description", ContainSubstring("no task"))),
		))
		idx := e.index()
		Expect(idx[done].LastOperation.State).To(Equal(vault.OperationSucceeded))
		Expect(idx[lost].LastOperation.State).To(Equal(vault.OperationFailed))
		Expect(idx[fresh].LastOperation.State).To(Equal(vault.OperationInProgress), "not stuck yet")

		op, err := b.LastOperation(ctx, lost, domainPoll())
		Expect(err).NotTo(HaveOccurred())
		Expect(string(op.State)).To(Equal("failed"))
		events, err := e.store.Events(ctx, lost, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(kindsOf(events)).To(ContainElement("operation_settled"))

		next := e.run(report.RunOptions{})
		Expect(next.Settled).To(BeEmpty(), "settled once")
		Expect(next.Orphaned).To(Equal(1), "the failed provision without a deployment is an orphan now, flagged, never deleted")
	})
})

func kindsOf(events []vault.Event) []string {
	var out []string
	for _, ev := range events {
		out = append(out, ev.Kind)
	}
	return out
}

func domainPoll() domain.PollDetails { return domain.PollDetails{} }
