package reconciler_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("opt-in remediation of orphans", func() {
	var (
		e   *env
		now atomic.Int64
	)
	// newRemediating makes an env whose reconciler remediates in mode, on a
	// clock the spec moves.
	newRemediating := func(mode string, maxPerRun int) {
		now.Store(time.Now().UnixNano())
		e = newEnv(envOptions{seed: 4, config: func(c *config.ReconcilerConfig) {
			c.Remediation = config.RemediationConfig{Mode: mode, MinAge: time.Hour, MaxPerRun: maxPerRun}
		}})
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			o.Now = func() time.Time { return time.Unix(0, now.Load()) }
			o.Directors[0].Deployer = e.bosh
		})
		Expect(e.run(report.RunOptions{}).Created).To(Equal(4))
	}
	later := func(d time.Duration) { now.Add(int64(d)) }

	It("purges an orphan after min_age, after a full backup, at most max_per_run a run; a dry run only says so", func() {
		newRemediating(config.RemediatePurge, 1)
		a, b := e.names[0], e.names[1]
		e.sim.RemoveDeployment(a)
		e.sim.RemoveDeployment(b)
		Expect(e.run(report.RunOptions{}).Orphaned).To(Equal(2))
		Expect(e.run(report.RunOptions{}).Remediated).To(BeEmpty(), "younger than min_age")

		later(2 * time.Hour)
		writes := e.vaultWrites()
		dry := e.run(report.RunOptions{DryRun: true})
		Expect(dry.Remediated).To(HaveLen(1), "max_per_run")
		Expect(dry.Remediated[0]).To(And(HaveField("Action", "purge"), HaveField("Backup", "")))
		Expect(e.vaultWrites()).To(Equal(writes), "a dry run writes nothing")

		s := e.run(report.RunOptions{})
		Expect(s.Remediated).To(HaveLen(1))
		purged := s.Remediated[0]
		Expect(purged.Backup).NotTo(BeEmpty())
		Expect(purged.Error).To(BeEmpty())
		Expect(e.index()).NotTo(HaveKey(purged.InstanceID))
		rec, _, err := e.store.Archive.LatestBackupRecord(ctx(), purged.InstanceID)
		Expect(err).NotTo(HaveOccurred())
		Expect(rec).NotTo(BeNil(), "the backup holds the record")
		events, err := e.store.Events(ctx(), purged.InstanceID, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(kindsOf(events)).To(ContainElement("remediated"))

		next := e.run(report.RunOptions{})
		Expect(next.Remediated).To(HaveLen(1), "the other one, next run")
		Expect(next.Remediated[0].InstanceID).NotTo(Equal(purged.InstanceID))
		rebuilt, err := e.m.RebuildIndex(ctx(), false)
		Expect(err).NotTo(HaveOccurred())
		Expect(rebuilt.Orphans).To(BeEmpty(), "a purged instance is not brought back by rebuild-index")
	})

	It("holds the instance for its redeploy: one the broker holds is not redeployed, one held is read again first", func() {
		newRemediating(config.RemediateRedeploy, 5)
		var held []string
		busy := ""
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			o.Now = func() time.Time { return time.Unix(0, now.Load()) }
			o.Directors[0].Deployer = e.bosh
			o.Hold = func(ctx context.Context, id string) (context.Context, func(), error) {
				if id == busy {
					return ctx, nil, fmt.Errorf("%w: the broker's update", reconciler.ErrInstanceBusy)
				}
				held = append(held, id)
				return ctx, func() {}, nil
			}
		})
		a, b := e.names[0], e.names[1]
		busy = instanceID(b)
		e.sim.RemoveDeployment(a)
		e.sim.RemoveDeployment(b)
		Expect(e.run(report.RunOptions{}).Orphaned).To(Equal(2))
		later(2 * time.Hour)
		tasks := e.sim.Stats().Tasks
		s := e.run(report.RunOptions{})
		Expect(s.Remediated).To(ConsistOf(
			And(HaveField("InstanceID", instanceID(a)), HaveField("TaskID", BeNumerically(">", 0)), HaveField("Error", "")),
			And(HaveField("InstanceID", busy), HaveField("TaskID", 0), HaveField("Error", ContainSubstring("taking the instance's hold")))))
		Expect(held).To(Equal([]string{instanceID(a)}))
		Expect(e.sim.Stats().Tasks).To(Equal(tasks+1), "the held one only")
	})

	It("redeploys an orphan's stored manifest through a task; never one with an operation in progress", func() {
		newRemediating(config.RemediateRedeploy, 5)
		gone, busy := e.names[2], e.names[3]
		manifest := e.manifest(gone)
		e.sim.RemoveDeployment(gone)
		e.sim.RemoveDeployment(busy)
		Expect(e.run(report.RunOptions{}).Orphaned).To(Equal(2))
		_, err := e.store.Update(ctx(), map[string]vault.Change{instanceID(busy): func(cur *vault.Record) (*vault.Record, error) {
			cur.LastOperation = &vault.Operation{Type: "update", State: vault.OperationInProgress,
				StartedAt: time.Unix(0, now.Load()).UTC().Format(time.RFC3339)}
			return cur, nil
		}})
		Expect(err).NotTo(HaveOccurred())

		later(2 * time.Hour)
		tasks := e.sim.Stats().Tasks
		s := e.run(report.RunOptions{})
		Expect(s.Remediated).To(ConsistOf(And(HaveField("InstanceID", instanceID(gone)), HaveField("Action", "redeploy"),
			HaveField("TaskID", BeNumerically(">", 0)))))
		Expect(e.sim.Stats().Tasks).To(Equal(tasks + 1))
		Eventually(func() string { t, _ := e.bosh.Manifest(ctx(), gone); return t }, 15*time.Second).Should(Equal(manifest))

		Eventually(func() int { return e.run(report.RunOptions{}).Unorphaned }, 15*time.Second).Should(Equal(1),
			"the deployment is back: its records, kept, are un-orphaned")
		Expect(e.index()[instanceID(gone)].Orphaned).To(BeFalse())
		Expect(e.run(report.RunOptions{}).Remediated).To(BeEmpty(), "nothing left: the busy one is never touched")
	})
})
