package reconciler_test

import (
	"context"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

const strayID = "0e1f2a3b-4c5d-4e6f-8a9b-0c1d2e3f4a5b"

// putRecord writes an index record as the broker would.
func (e *env) putRecord(id string, rec *vault.Record) {
	GinkgoHelper()
	_, err := e.store.Update(context.Background(), map[string]vault.Change{
		id: func(*vault.Record) (*vault.Record, error) { return rec, nil },
	})
	Expect(err).NotTo(HaveOccurred())
}

var _ = Describe("orphans", func() {
	It("flags an entry whose deployment is gone, keeps it flagged, and un-flags it when the deployment comes back", func() {
		e := newEnv(envOptions{seed: 3})
		e.run(report.RunOptions{})
		name := e.names[0]
		id, manifest := instanceID(name), e.manifest(name)
		e.sim.RemoveDeployment(name)

		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Orphaned).To(Equal(1))
		Expect(s.OrphansTotal).To(Equal(1))
		rec := e.index()[id]
		Expect(rec.Orphaned).To(BeTrue())
		at, err := time.Parse(time.RFC3339, rec.OrphanedAt)
		Expect(err).NotTo(HaveOccurred())
		Expect(at).To(BeTemporally("~", time.Now(), time.Minute))
		Expect(e.m.Status().Orphans).To(ConsistOf(report.Orphan{InstanceID: id, Deployment: name, OrphanedAt: at}))
		Expect(counter(e.reg, "blacksmith_reconciler_instances", map[string]string{"state": "orphaned"})).To(Equal(1.0))

		again := e.run(report.RunOptions{})
		Expect(again.Orphaned).To(BeZero())
		Expect(again.Writes).To(BeZero(), "a flagged orphan is not written again")
		Expect(e.index()[id].OrphanedAt).To(Equal(rec.OrphanedAt))
		Expect(e.index()).To(HaveLen(3), "orphans are never deleted")

		Expect(e.sim.PutDeployment(manifest)).To(Succeed())
		back := e.run(report.RunOptions{})
		Expect(back.Errors).To(BeEmpty())
		Expect(back.Unorphaned).To(Equal(1))
		rec = e.index()[id]
		Expect(rec.Orphaned).To(BeFalse())
		_, err = time.Parse(time.RFC3339, rec.UnorphanedAt)
		Expect(err).NotTo(HaveOccurred())
		Expect(e.m.Status().Orphans).To(BeEmpty())
		Expect(counter(e.reg, "blacksmith_reconciler_instances", map[string]string{"state": "orphaned"})).To(BeZero())
	})

	It("does not flag an entry within the grace period after its creation", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.OrphanGracePeriod = time.Hour }})
		e.run(report.RunOptions{})
		id := instanceID(e.names[0])
		e.sim.RemoveDeployment(e.names[0])
		Expect(e.run(report.RunOptions{}).Orphaned).To(BeZero())
		Expect(e.index()[id].Orphaned).To(BeFalse())

		rec := e.index()[id]
		rec.Created = time.Now().Add(-2 * time.Hour).Unix()
		e.putRecord(id, rec)
		Expect(e.run(report.RunOptions{}).Orphaned).To(Equal(1))
		Expect(e.index()[id].Orphaned).To(BeTrue())
	})

	It("does not flag an entry while the broker's provision is in progress", func() {
		e := newEnv(envOptions{seed: 1})
		rec := &vault.Record{ServiceID: "redis", PlanID: "redis-small", Created: time.Now().Add(-time.Hour).Unix(),
			LastOperation: &vault.Operation{Type: "provision", State: "in progress", TaskID: 7}}
		e.putRecord(strayID, rec)
		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Orphaned).To(BeZero())
		Expect(e.index()[strayID].Orphaned).To(BeFalse())

		rec.LastOperation.State = "failed"
		e.putRecord(strayID, rec)
		Expect(e.run(report.RunOptions{}).Orphaned).To(Equal(1), "flagged once the operation is over")
		Expect(e.index()[strayID].LastOperation.State).To(Equal("failed"), "broker fields are kept")
	})

	It("does not flag an entry while a Director task for its deployment is queued, nor a locked deployment", func() {
		e := newEnv(envOptions{seed: 2, sim: sim.Options{Workers: 1, TaskDuration: time.Minute}})
		e.run(report.RunOptions{})
		ctx := context.Background()
		locked := e.names[0]
		_, err := e.bosh.Deploy(ctx, []byte(e.manifest(locked)))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() bool { return listed(e, locked).Locked }).Should(BeTrue())

		gone := "redis-small-" + strayID
		e.putRecord(strayID, &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: gone})
		// A delete queued behind the deploy, of a deployment that has gone
		// meanwhile (the Director answers 404 before any task when it is
		// already gone).
		Expect(e.sim.PutDeployment(strings.Replace(e.manifest(locked), locked, gone, 1))).To(Succeed())
		task, err := e.bosh.DeleteDeployment(ctx, gone, false)
		Expect(err).NotTo(HaveOccurred())
		Expect(task.State).To(Equal(bosh.TaskQueued))
		e.sim.RemoveDeployment(gone)

		e.sim.ResetStats()
		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Busy).To(Equal(1))
		Expect(s.Orphaned).To(BeZero())
		idx := e.index()
		Expect(idx[strayID].Orphaned).To(BeFalse())
		Expect(idx[instanceID(locked)].Orphaned).To(BeFalse())
		Expect(e.sim.Stats().Requests).To(HaveKeyWithValue("GET /tasks", 2), "the task feed's read and one task query for the candidates")
	})
})

// listed returns the listing entry of a deployment.
func listed(e *env, name string) bosh.Deployment {
	GinkgoHelper()
	deps, err := e.bosh.Deployments(context.Background())
	Expect(err).NotTo(HaveOccurred())
	for _, d := range deps {
		if d.Name == name {
			return d
		}
	}
	Fail("deployment " + name + " not listed")
	return bosh.Deployment{}
}
