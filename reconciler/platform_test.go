package reconciler_test

import (
	"context"
	"slices"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/cf"
	ccsim "github.com/blacksmith-reconciler/blacksmith/cf/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// platform is a Cloud Controller simulator with the broker "blacksmith"
// registered (the test catalog's plans), and a client of it.
type platform struct {
	cc     *ccsim.CC
	client *cf.Client
	plans  map[string]string // catalog plan id -> plan guid
	space  string
}

func newPlatform() *platform {
	GinkgoHelper()
	cc, err := ccsim.New(ccsim.Options{})
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(cc.Close)
	_, err = cc.Foundation().Seed("blacksmith", 0)
	Expect(err).NotTo(HaveOccurred())
	p := &platform{cc: cc, plans: map[string]string{}}
	p.client, err = cf.New(cf.Options{API: cc.URL(), ClientID: ccsim.DefaultClientID, ClientSecret: ccsim.DefaultClientSecret,
		Registerer: prometheus.NewRegistry(), Logger: testLogger()})
	Expect(err).NotTo(HaveOccurred())
	plans, err := p.client.ServicePlans(context.Background(), "blacksmith")
	Expect(err).NotTo(HaveOccurred())
	for _, pl := range plans {
		p.plans[pl.CatalogID] = pl.GUID
	}
	space, err := cc.Foundation().AddSpace(cc.Foundation().AddOrg("tenant-org").GUID, "tenant-space")
	Expect(err).NotTo(HaveOccurred())
	p.space = space.GUID
	return p
}

// add registers a managed instance of the catalog plan, its create in the state given.
func (p *platform) add(id, planID, state string) {
	GinkgoHelper()
	_, err := p.cc.Foundation().AddInstance(id, "my-"+id[:8], p.plans[planID], p.space,
		ccsim.LastOperation{Type: ccsim.OpCreate, State: state, Description: "x"})
	Expect(err).NotTo(HaveOccurred())
}

// options wire the reconciler to the platform.
func (p *platform) options(o *reconciler.Options) {
	o.Platform = &reconciler.PlatformOptions{Reader: p.client, BrokerName: "blacksmith", Requests: p.client.Requests}
}

// listener keeps the events a reconciler tells.
type listener struct {
	mu     sync.Mutex
	events []notify.Event
}

func (h *listener) Notify(e notify.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *listener) of(kind string) []notify.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []notify.Event
	for _, e := range h.events {
		if e.Type == kind {
			out = append(out, e)
		}
	}
	return out
}

var _ = Describe("the platform cross-check", func() {
	It("holds each instance against the platform by guid: in step, orphan deployment, platform only, an orphan the platform has, a create in progress", func() {
		e := newEnv(envOptions{seed: 4, config: func(c *config.ReconcilerConfig) { c.Remediation.MinAge = 0 }}) // every read counts
		p := newPlatform()
		ids := []string{instanceID(e.names[0]), instanceID(e.names[1]), instanceID(e.names[2]), instanceID(e.names[3])}
		plan := func(i int) string { return e.names[i][:len(e.names[i])-37] }
		p.add(ids[0], plan(0), ccsim.StateSucceeded)
		p.add(ids[1], plan(1), ccsim.StateSucceeded)
		p.add(ids[3], plan(3), ccsim.StateSucceeded)
		lost, creating := "5a5b5c5d-0000-4000-8000-00000000cf01", "5a5b5c5d-0000-4000-8000-00000000cf02"
		p.add(lost, "redis-small", ccsim.StateSucceeded)
		p.add(creating, "redis-small", ccsim.StateInProgress)
		h := &listener{}
		reg := prometheus.NewRegistry()
		e.m = e.newManagerWith(func(o *reconciler.Options) { p.options(o); o.Notifier, o.Registerer = h, reg })

		first := e.run(report.RunOptions{})
		Expect(first.Errors).To(BeEmpty())
		Expect(first.Platform).NotTo(BeNil())
		Expect(first.Platform.State).To(Equal("known"))
		Expect(first.Platform.Counts[report.OrphanDeployment]).To(BeZero(),
			"records this run created are younger than the view: judged by the next run")

		e.sim.RemoveDeployment(e.names[1]) // the platform's instance keeps a record without a deployment
		e.run(report.RunOptions{})         // flags it an orphan
		p.client.Requests()
		before := p.client.Requests()
		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		rep := s.Platform
		Expect(rep.State).To(Equal("known"))
		Expect(rep.Fresh).To(BeTrue())
		Expect(rep.Requests).To(Equal(2), "the broker's plans and one page of instances; root and token kept")
		Expect(p.client.Requests() - before).To(BeEquivalentTo(2))
		Expect(rep.Instances).To(Equal(5))
		Expect(rep.Counts).To(Equal(map[string]int{"in_step": 2, "orphan_deployment": 1, "platform_only": 1, "orphan": 1,
			"creating": 1, "absent": 0, "not_the_platforms": 0}))
		Expect(rep.OrphanDeployments).To(ConsistOf(And(HaveField("InstanceID", ids[2]), HaveField("Deployment", e.names[2]),
			HaveField("Reads", 2), HaveField("AbsentSince", Not(BeZero())))))
		Expect(rep.PlatformOnly).To(ConsistOf(And(HaveField("InstanceID", lost), HaveField("PlanID", "redis-small"),
			HaveField("Restorable", "nothing"), HaveField("Platform.Name", "my-5a5b5c5d"), HaveField("Platform.Space", "tenant-space"),
			HaveField("Platform.Organization", "tenant-org"), HaveField("Platform.Operation", "create succeeded"))))

		Expect(h.of(notify.OrphanDeployment)).To(ConsistOf(And(HaveField("InstanceID", ids[2]), HaveField("Deployment", e.names[2]))),
			"told once, when first found")
		Expect(e.m.Status().Platform).To(Equal(rep))
		Expect(counter(reg, "blacksmith_platform_instances", map[string]string{"state": "orphan_deployment"})).To(Equal(1.0))
		Expect(counter(reg, "blacksmith_platform_instances", map[string]string{"state": "platform_only"})).To(Equal(1.0))
		Expect(counter(reg, "blacksmith_platform_up", nil)).To(Equal(1.0))

		v, err := e.m.Views().Instance(context.Background(), ids[1])
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Platform).To(And(HaveField("View", "known"), HaveField("Record.Name", "my-"+ids[1][:8]),
			HaveField("Record.Space", "tenant-space"), HaveField("Record.Operation", "create succeeded")))
		v, err = e.m.Views().Instance(context.Background(), ids[2])
		Expect(err).NotTo(HaveOccurred())
		Expect(v.Platform.Record).To(BeNil())
		Expect(v.Platform.Reads).To(Equal(2))
		v, err = e.m.Views().Instance(context.Background(), lost)
		Expect(err).NotTo(HaveOccurred())
		Expect(v).NotTo(BeNil(), "the broker lost it; the platform's record is shown")
		Expect(v.Record).To(BeNil())
		Expect(v.Platform.Record.Name).To(Equal("my-5a5b5c5d"))

		// The platform deletes the orphan's instance, and a later deployment of
		// the lost instance's name shows up: restorable from it.
		Expect(p.cc.Foundation().RemoveInstance(ids[1])).To(BeTrue())
		again := e.run(report.RunOptions{})
		Expect(again.Platform.Counts["orphan"]).To(BeZero())
		Expect(again.Platform.Counts["absent"]).To(Equal(1), "an orphan neither the platform nor a Director has")
		Expect(h.of(notify.OrphanDeployment)).To(HaveLen(1))
	})

	It("calls the platform unknown when the Cloud Controller fails or cuts a page short: nothing judged, the proof kept", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.Remediation.MinAge = 0 }}) // every read counts
		p := newPlatform()
		p.add(instanceID(e.names[0]), e.names[0][:len(e.names[0])-37], ccsim.StateSucceeded)
		reg := prometheus.NewRegistry()
		e.m = e.newManagerWith(func(o *reconciler.Options) { p.options(o); o.Registerer = reg })
		e.run(report.RunOptions{})
		Expect(e.run(report.RunOptions{}).Platform.Counts["orphan_deployment"]).To(Equal(1))
		proof := platformDoc(e)
		Expect(proof).To(HaveLen(1))

		for _, f := range []ccsim.Failure{{Endpoint: "/v3/service_instances", Status: 503}, {Endpoint: "/v3/service_instances", CutShort: true},
			{Endpoint: "/v3/service_plans", Status: 502}} {
			p.cc.Knobs().ClearFailures()
			Expect(p.cc.Knobs().InjectFailure(f)).To(Succeed())
			s := e.run(report.RunOptions{})
			Expect(s.Platform.State).To(Equal("unknown"), "%+v", f)
			Expect(s.Platform.Reason).NotTo(BeEmpty())
			Expect(s.Platform.Counts).To(BeEmpty())
			Expect(s.Platform.OrphanDeployments).To(BeEmpty())
			Expect(s.Errors).To(BeEmpty(), "the platform's outage is reported, it does not fail the reconciliation of Vault and BOSH")
			Expect(platformDoc(e)).To(Equal(proof), "neither carried on nor ended")
			Expect(counter(reg, "blacksmith_platform_up", nil)).To(BeZero())
		}
		p.cc.Knobs().ClearFailures()
		Expect(e.run(report.RunOptions{}).Platform.OrphanDeployments[0].Reads).To(Equal(2), "the failed reads did not count")

		Expect(p.cc.Knobs().InjectFailure(ccsim.Failure{Endpoint: "/v3/service_instances", Status: 503, Count: 1})).To(Succeed())
		s := e.run(report.RunOptions{})
		Expect(s.Platform.State).To(Equal("known"), "a passing fault is retried with the run's policy")
		Expect(s.Platform.OrphanDeployments[0].Reads).To(Equal(3))

		Expect(p.cc.Knobs().InjectFailure(ccsim.Failure{Endpoint: "/v3/service_plans", Status: 401, Count: 1})).To(Succeed())
		s = e.run(report.RunOptions{})
		Expect(s.Platform.State).To(Equal("unknown"), "a refusal is not retried")
	})

	It("calls a broker name the platform lists no plan of unknown, not every instance an orphan deployment", func() {
		e := newEnv(envOptions{seed: 2})
		p := newPlatform()
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			p.options(o)
			o.Platform.BrokerName = "blacksmith-typo"
		})
		e.run(report.RunOptions{})
		s := e.run(report.RunOptions{})
		Expect(s.Platform.State).To(Equal("unknown"))
		Expect(s.Platform.Reason).To(ContainSubstring(`no plan of a broker named "blacksmith-typo"`))
	})

	It("reads the platform at most every check_interval, and acts on no view it did not read", func() {
		e := newEnv(envOptions{seed: 1})
		p := newPlatform()
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			p.options(o)
			o.Platform.CheckInterval = time.Hour
		})
		Expect(e.run(report.RunOptions{}).Platform.Fresh).To(BeTrue())
		before := p.client.Requests()
		s := e.run(report.RunOptions{})
		Expect(p.client.Requests()).To(Equal(before), "not due")
		Expect(s.Platform.Fresh).To(BeFalse())
		Expect(s.Platform.Counts["orphan_deployment"]).To(Equal(1), "the last view, reported")
		Expect(platformDoc(e)).To(BeEmpty(), "no proof from a view this run did not read")
		Expect(e.run(report.RunOptions{Force: true}).Platform.Fresh).To(BeTrue(), "a forced run reads")
		Expect(platformDoc(e)).To(HaveLen(1))
	})
})

var _ = Describe("the remediation of orphan deployments", func() {
	It("retires an orphan deployment in two steps: its VMs stopped once the platform has been read without it for min_age, "+
		"deleted after retirement_period, each after a full backup, never from an unknown platform", func() {
		minAge := 24 * time.Hour // the defaults, on a clock the spec moves on
		period := 7 * 24 * time.Hour
		f := newFleet(3, func(c *config.ReconcilerConfig) {
			c.Remediation.OrphanDeployments = config.OrphanDeploymentsDelete
			c.Remediation.MinAge = minAge
			c.Remediation.RetirementPeriod = period
			c.Remediation.OrphanDeploymentsMaxShare = 0.5 // 1 of 3; the default floor (10%) is its own spec
		})
		p := newPlatform()
		kept, orphan, other := f.ids[0], f.ids[1], f.ids[2]
		p.add(kept, "redis-small", ccsim.StateSucceeded)
		p.add(other, "redis-small", ccsim.StateSucceeded)
		h := &listener{}
		f.clock = &skewedClock{}
		f.use(upgradeCatalog("1.0.0", "16.1.0"), func(o *reconciler.Options) { p.options(o); o.Notifier = h })
		ctx := context.Background()
		acted := func(s report.Summary) []string {
			var out []string
			for _, r := range slices.Concat(s.Platform.Stopped, s.Platform.Deleted, s.Platform.Started) {
				out = append(out, r.Action+" "+r.InstanceID)
			}
			return out
		}

		s := f.e.run(report.RunOptions{})
		Expect(s.Platform.OrphanDeployments).To(ConsistOf(HaveField("InstanceID", orphan)))
		Expect(acted(s)).To(BeEmpty(), "one read, and not min_age")
		Expect(acted(f.e.run(report.RunOptions{DryRun: true}))).To(BeEmpty(), "still within min_age")

		f.clock.advance(minAge/2 + time.Minute)
		Expect(acted(f.e.run(report.RunOptions{}))).To(BeEmpty(), "two reads")
		Expect(acted(f.e.run(report.RunOptions{Force: true}))).To(BeEmpty(), "a forced run at once counts for nothing")
		Expect(platformDoc(f.e)).To(HaveKeyWithValue(orphan, HaveKeyWithValue("reads", 2.0)))
		f.clock.advance(minAge/2 + time.Minute)
		Expect(p.cc.Knobs().InjectFailure(ccsim.Failure{Endpoint: "/v3/service_instances", Status: 503})).To(Succeed())
		s = f.e.run(report.RunOptions{})
		Expect(s.Platform.State).To(Equal("unknown"))
		Expect(acted(s)).To(BeEmpty(), "never from an unknown platform")

		p.cc.Knobs().ClearFailures()
		dry := f.e.run(report.RunOptions{DryRun: true})
		Expect(dry.Platform.Stopped).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("Action", "stop"), HaveField("TaskID", 0))),
			"a dry run lists the first step")
		Expect(f.e.bosh.VMs(ctx, f.deployment(orphan))).NotTo(BeEmpty())

		By("the first step: its VMs stopped, the deployment and its disks kept")
		s = f.e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Platform.Deleted).To(BeEmpty(), "never deleted before it was stopped")
		Expect(s.Platform.Stopped).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("Action", "stop"),
			HaveField("Backup", Not(BeEmpty())), HaveField("TaskID", Not(BeZero())), HaveField("Error", ""))))
		stopBackup := s.Platform.Stopped[0].Backup
		Eventually(func() (int, error) {
			vms, err := f.e.bosh.VMs(ctx, f.deployment(orphan))
			return len(vms), err
		}).WithTimeout(10 * time.Second).Should(BeZero())
		Expect(f.e.deployed()).To(ContainElement(f.deployment(orphan)))
		Expect(f.e.index()[orphan].Retiring).To(And(Not(BeNil()), HaveField("Backup", stopBackup)))
		Expect(h.of(notify.Remediated)).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("Reason", ContainSubstring("VMs stopped")))))
		_, _, err := f.b.DeleteOrphanDeployment(ctx, orphan, "by hand")
		Expect(err).To(MatchError(broker.ErrNotRetired), "the broker deletes nothing before the stop is settled and due")

		s = f.e.run(report.RunOptions{})
		Expect(s.Settled).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("State", "succeeded"))),
			"the next run settles the stop, no platform polls it")
		Expect(acted(s)).To(BeEmpty(), "its deletion is not due yet")
		Expect(f.e.index()[orphan].Retiring).NotTo(BeNil())
		s = f.e.run(report.RunOptions{})
		Expect(s.Platform.OrphanDeployments).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("DeleteAfter", Not(BeZero())))))

		f.clock.advance(period - time.Hour)
		Expect(acted(f.e.run(report.RunOptions{}))).To(BeEmpty(), "an hour before its deletion is due")

		By("the second step, once retirement_period has passed without the platform listing it")
		f.clock.advance(time.Hour)
		dry = f.e.run(report.RunOptions{DryRun: true})
		Expect(dry.Platform.Deleted).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("Action", "delete"), HaveField("TaskID", 0))),
			"a dry run lists the second step")
		Expect(f.e.deployed()).To(ContainElement(f.deployment(orphan)))
		s = f.e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Platform.Deleted).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("Action", "delete"),
			HaveField("Backup", Not(BeEmpty())), HaveField("TaskID", Not(BeZero())), HaveField("Error", ""))))
		backup := s.Platform.Deleted[0].Backup
		Eventually(f.e.deployed).WithTimeout(10 * time.Second).ShouldNot(ContainElement(f.deployment(orphan)))
		Expect(h.of(notify.Remediated)).To(HaveLen(2))

		s = f.e.run(report.RunOptions{})
		Expect(s.Settled).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("State", "succeeded"))),
			"the next run settles the deprovision, no platform polls it")
		Expect(f.e.index()).NotTo(HaveKey(orphan))
		Expect(f.e.index()).To(HaveKey(kept))
		Expect(f.e.deployed()).To(ContainElements(f.deployment(kept), f.deployment(other)))
		parts, err := f.e.store.Archive.BackupParts(ctx, orphan, backup)
		Expect(err).NotTo(HaveOccurred())
		Expect(parts.Record).NotTo(BeNil(), "the backup taken before the task holds the record")
		events, err := f.e.store.Events(ctx, orphan, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(kindsOf(events)).To(ContainElements("orphan_deployment", "stop", "deprovision", "remediated"))
		f.e.run(report.RunOptions{})
		Expect(platformDoc(f.e)).To(BeEmpty(), "its proof ends with its records")
	})

	It("ends a retirement when the platform lists the instance again: its VMs started, never deleted", func() {
		period := 7 * 24 * time.Hour
		f := newFleet(2, func(c *config.ReconcilerConfig) {
			c.Remediation.OrphanDeployments = config.OrphanDeploymentsDelete
			c.Remediation.MinAge = 0
			c.Remediation.RetirementPeriod = period
			c.Remediation.OrphanDeploymentsMaxShare = 0.5
		})
		p := newPlatform()
		kept, orphan := f.ids[0], f.ids[1]
		p.add(kept, "redis-small", ccsim.StateSucceeded)
		f.clock = &skewedClock{}
		f.use(upgradeCatalog("1.0.0", "16.1.0"), p.options)
		ctx := context.Background()
		var s report.Summary
		for range 3 {
			s = f.e.run(report.RunOptions{})
		}
		Expect(s.Platform.Stopped).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("Error", ""))))
		Eventually(func() (int, error) {
			vms, err := f.e.bosh.VMs(ctx, f.deployment(orphan))
			return len(vms), err
		}).WithTimeout(10 * time.Second).Should(BeZero())
		s = f.e.run(report.RunOptions{}) // settles the stop
		Expect(f.e.index()[orphan].Retiring).NotTo(BeNil())

		_, err := f.b.Update(ctx, orphan, domain.UpdateDetails{ServiceID: "redis", PlanID: "redis-small"}, true)
		Expect(err).To(MatchError(ContainSubstring("VMs are stopped")), "a retiring instance is not deployed")

		p.add(orphan, "redis-small", ccsim.StateSucceeded)
		dry := f.e.run(report.RunOptions{DryRun: true})
		Expect(dry.Platform.Started).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("TaskID", 0))), "a dry run lists the start")
		s = f.e.run(report.RunOptions{})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Platform.Started).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("Action", "start"),
			HaveField("TaskID", Not(BeZero())), HaveField("Error", ""))))
		Eventually(func() (int, error) {
			vms, err := f.e.bosh.VMs(ctx, f.deployment(orphan))
			return len(vms), err
		}).WithTimeout(10 * time.Second).ShouldNot(BeZero())
		s = f.e.run(report.RunOptions{})
		Expect(s.Settled).To(ConsistOf(And(HaveField("InstanceID", orphan), HaveField("State", "succeeded"))))
		Expect(f.e.index()[orphan].Retiring).To(BeNil(), "the start that succeeded ends the retirement")

		f.clock.advance(period + time.Hour)
		s = f.e.run(report.RunOptions{})
		Expect(slices.Concat(s.Platform.Stopped, s.Platform.Deleted)).To(BeEmpty())
		Expect(f.e.deployed()).To(ContainElement(f.deployment(orphan)))
		events, err := f.e.store.Events(ctx, orphan, 0)
		Expect(err).NotTo(HaveOccurred())
		Expect(kindsOf(events)).To(ContainElements("stop", "start", "remediated"))
	})

	It("leaves an instance the broker does not own, and refuses a read that makes most of the fleet orphans", func() {
		e := newEnv(envOptions{seed: 1, config: func(c *config.ReconcilerConfig) {
			c.Remediation.OrphanDeployments = config.OrphanDeploymentsDelete
			c.Remediation.MinAge = 0
			c.Remediation.MaxPerRun = 5
			c.Remediation.OrphanDeploymentsMaxShare = 1
		}})
		p := newPlatform()
		b := newTestBroker(e)
		e.m = e.newManagerWith(func(o *reconciler.Options) { p.options(o); o.Operations = b })
		for range 3 {
			e.run(report.RunOptions{})
		}
		s := e.run(report.RunOptions{})
		Expect(s.Platform.Stopped).To(ConsistOf(And(HaveField("InstanceID", instanceID(e.names[0])),
			HaveField("Error", ContainSubstring("adopted from a Director")))))
		Expect(s.Errors).To(BeEmpty(), "a refusal is not a failure")
		Expect(e.deployed()).To(ContainElement(e.names[0]))

		many := newEnv(envOptions{seed: 8, config: func(c *config.ReconcilerConfig) {
			c.Remediation.OrphanDeployments = config.OrphanDeploymentsDelete
			c.Remediation.MinAge = 0
			c.Remediation.MaxPerRun = 2
		}})
		many.m = many.newManagerWith(func(o *reconciler.Options) { p.options(o); o.Operations = newTestBroker(many) })
		for range 3 {
			many.run(report.RunOptions{})
		}
		s = many.run(report.RunOptions{})
		Expect(s.Platform.Counts["orphan_deployment"]).To(Equal(8))
		Expect(s.Platform.Stopped).To(BeEmpty())
		Expect(s.Platform.Deleted).To(BeEmpty())
		Expect(s.Platform.Refused).To(ContainSubstring("8 of the 8 instances look like orphan deployments"))
		Expect(many.deployed()).To(HaveLen(8))
	})
})

var _ = Describe("the absolute floor of retirement", func() {
	It("deletes nothing of a small fleet the platform lists none of, at the defaults (max_per_run 5, 10%)", func() {
		e := newEnv(envOptions{seed: 5, config: func(c *config.ReconcilerConfig) {
			c.Remediation.OrphanDeployments = config.OrphanDeploymentsDelete
			c.Remediation.MinAge = 0
		}})
		p := newPlatform() // the broker's plans, none of its instances
		e.m = e.newManagerWith(func(o *reconciler.Options) { p.options(o); o.Operations = newTestBroker(e) })
		for range 3 {
			e.run(report.RunOptions{})
		}
		s := e.run(report.RunOptions{})
		Expect(s.Platform.Counts["orphan_deployment"]).To(Equal(5), "5 is not more than max_per_run: the old guard let them all go")
		Expect(s.Platform.Stopped).To(BeEmpty())
		Expect(s.Platform.Refused).To(ContainSubstring("5 of the 5 instances look like orphan deployments"))
		Expect(s.Platform.Refused).To(ContainSubstring("orphan_deployments_max_share"))
		Expect(e.deployed()).To(HaveLen(5))
	})
})

var _ = Describe("the orphan deployments' proof in Vault", func() {
	It("deletes nothing in a run that could not keep the proof it carried on", func() {
		e := newEnv(envOptions{seed: 1, proxy: true, config: func(c *config.ReconcilerConfig) {
			c.Remediation.OrphanDeployments = config.OrphanDeploymentsDelete
			c.Remediation.MinAge = 0
			c.Remediation.OrphanDeploymentsMaxShare = 1
		}})
		p := newPlatform()
		e.m = e.newManagerWith(func(o *reconciler.Options) { p.options(o); o.Operations = newTestBroker(e) })
		e.run(report.RunOptions{}) // the record is made: younger than the view
		Expect(e.run(report.RunOptions{}).Platform.Stopped).To(BeEmpty(), "one read")
		Expect(e.run(report.RunOptions{}).Platform.Stopped).To(BeEmpty(), "two reads")
		Expect(e.run(report.RunOptions{}).Platform.Stopped).To(HaveLen(1), "proven by three: tried (and refused: an adoption)")

		e.proxy.failWrites("blacksmith/state/platform", -1)
		s := e.run(report.RunOptions{})
		Expect(s.Platform.Stopped).To(BeEmpty(), "the proof of this read could not be kept: nothing tried from the one before")
		Expect(platformDoc(e)).To(HaveKeyWithValue(instanceID(e.names[0]), HaveKeyWithValue("reads", 3.0)))
		e.proxy.heal()
		Expect(e.run(report.RunOptions{}).Platform.Stopped).To(HaveLen(1))
	})
})

// platformDoc is the orphan deployments' proof as Vault keeps it.
func platformDoc(e *env) map[string]any {
	GinkgoHelper()
	var doc struct {
		Absent map[string]any `json:"absent"`
	}
	_, err := e.store.State.ReadState(context.Background(), "platform", &doc)
	Expect(err).NotTo(HaveOccurred())
	if doc.Absent == nil {
		return map[string]any{}
	}
	return doc.Absent
}

// deployed are the names of the deployments the Director lists.
func (e *env) deployed() []string {
	GinkgoHelper()
	deps, err := e.bosh.Deployments(context.Background())
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, d := range deps {
		out = append(out, d.Name)
	}
	return out
}

// newTestBroker is a broker over the env's Director and Vault, serving the
// test catalog.
func newTestBroker(e *env) *broker.Broker {
	GinkgoHelper()
	b, err := broker.New(broker.Options{Catalog: testCatalog, Directors: []broker.NamedDirector{{Director: e.bosh, Reader: e.bosh}},
		Store: e.store, Username: "u", Password: "p", Logger: testLogger()})
	Expect(err).NotTo(HaveOccurred())
	return b
}
