package reconciler_test

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/pivotal-cf/brokerapi/v11/domain"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// renderedCatalog is the test catalog with a manifest template for
// redis-small, so that the broker provisions and renders it.
func renderedCatalog() *catalog.Catalog {
	GinkgoHelper()
	tpl := upgradeTemplate("16.1.0")
	return &catalog.Catalog{Services: []catalog.Service{{ID: "redis", Name: "redis", Bindable: true, Plans: []catalog.Plan{
		{ID: "redis-small", Name: "small", ServiceID: "redis", Manifest: tpl},
		{ID: "redis-large", Name: "large", ServiceID: "redis"},
	}}}}
}

// Remediation and rollback deploy only what the broker rendered, never a
// manifest recorded as drift.
var _ = Describe("redeploys", func() {
	var (
		e   *env
		now atomic.Int64
	)
	later := func(d time.Duration) { now.Add(int64(d)) }

	// newRedeploying is an env remediating orphans by redeploying them, on a
	// clock the spec moves, with a broker that renders (nil: none).
	newRedeploying := func(seed int, withBroker bool) *broker.Broker {
		GinkgoHelper()
		now.Store(time.Now().UnixNano())
		e = newEnv(envOptions{seed: seed, config: func(c *config.ReconcilerConfig) {
			c.Remediation = config.RemediationConfig{Mode: config.RemediateRedeploy, MinAge: time.Hour, MaxPerRun: 5}
		}})
		var b *broker.Broker
		if withBroker {
			var err error
			b, err = broker.New(broker.Options{Catalog: renderedCatalog(), Directors: []broker.NamedDirector{{Director: e.bosh, Reader: e.bosh}},
				Store: e.store, Username: "u", Password: "p", Logger: testLogger()})
			Expect(err).NotTo(HaveOccurred())
		}
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			o.Now = func() time.Time { return time.Unix(0, now.Load()) }
			o.Directors[0].Deployer = e.bosh
			o.Catalog = renderedCatalog()
			if b != nil {
				o.Renderer, o.Operations = b, b
			}
		})
		return b
	}

	// driftOf changes deployment name on the Director behind the broker's back.
	driftOf := func(name string) string {
		GinkgoHelper()
		drifted := strings.TrimRight(e.manifest(name), "\n") + "\ntags: {tuned_by_hand: \"yes\"}\n"
		Expect(e.sim.PutDeployment(drifted)).To(Succeed())
		return drifted
	}

	It("redeploys an owned orphan from the broker's rendering, not from the drift Vault recorded", func() {
		b := newRedeploying(0, true)
		ctx := context.Background()
		const id = "5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d"
		name := vault.DeploymentName("redis-small", id)
		_, err := b.Provision(ctx, id, domain.ProvisionDetails{ServiceID: "redis", PlanID: "redis-small",
			OrganizationGUID: "org-a", SpaceGUID: "space-a"}, true)
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() domain.LastOperationState {
			op, _ := b.LastOperation(ctx, id, domain.PollDetails{OperationData: "provision"})
			return op.State
		}, 15*time.Second, 50*time.Millisecond).Should(Equal(domain.Succeeded))
		rendered := e.manifest(name)
		Expect(e.run(report.RunOptions{}).Errors).To(BeEmpty())

		drifted := driftOf(name)
		Expect(e.run(report.RunOptions{Force: true}).Drift).To(Equal(1))
		stored, _, _ := e.store.Manifest(ctx, id)
		Expect(stored).To(Equal(drifted), "Vault records the drift")
		e.sim.RemoveDeployment(name)
		Expect(e.run(report.RunOptions{}).Orphaned).To(Equal(1))

		later(2 * time.Hour)
		s := e.run(report.RunOptions{})
		Expect(s.Remediated).To(ConsistOf(And(HaveField("InstanceID", id), HaveField("Error", ""), HaveField("TaskID", BeNumerically(">", 0)))))
		Eventually(func() string { t, _ := e.bosh.Manifest(ctx, name); return t }, 15*time.Second).Should(Equal(rendered),
			"the broker's manifest, rendered again from the plan's template and the recorded parameters")
	})

	It("refuses to redeploy an adopted orphan whose kept manifest is one recorded as drift", func() {
		newRedeploying(1, false)
		name := e.names[0]
		Expect(e.run(report.RunOptions{}).Created).To(Equal(1))
		driftOf(name)
		Expect(e.run(report.RunOptions{Force: true}).Drift).To(Equal(1))
		e.sim.RemoveDeployment(name)
		Expect(e.run(report.RunOptions{}).Orphaned).To(Equal(1))
		later(2 * time.Hour)
		tasks := e.sim.Stats().Tasks
		s := e.run(report.RunOptions{})
		Expect(s.Remediated).To(ConsistOf(And(HaveField("InstanceID", instanceID(name)),
			HaveField("Error", ContainSubstring("recorded as drift")))))
		Expect(e.sim.Stats().Tasks).To(Equal(tasks), "no task")
	})

	It("refuses a rollback that would deploy a manifest recorded as drift", func() {
		newRedeploying(1, false)
		ctx := context.Background()
		name, id := e.names[0], instanceID(e.names[0])
		Expect(e.run(report.RunOptions{}).Created).To(Equal(1))
		driftOf(name)
		Expect(e.run(report.RunOptions{Force: true}).Drift).To(Equal(1))
		// A backup taken now holds the drift as the instance's manifest.
		drift, err := e.store.BackupAll(ctx, id)
		Expect(err).NotTo(HaveOccurred())
		tasks := e.sim.Stats().Tasks
		_, err = e.m.Rollback(ctx, id, drift, true)
		Expect(err).To(MatchError(reconciler.ErrRollback))
		Expect(err.Error()).To(ContainSubstring("recorded as drift"))
		Expect(e.sim.Stats().Tasks).To(Equal(tasks), "no task")
	})
})
