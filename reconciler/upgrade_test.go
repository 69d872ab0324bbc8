package reconciler_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/pivotal-cf/brokerapi/v11/domain"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// upgradeTemplate is redis-small's manifest template; release is the
// version of redis it deploys.
func upgradeTemplate(release string) *catalog.Template {
	GinkgoHelper()
	tpl, err := catalog.ParseTemplate("manifest.yml", `name: ignored
releases: [{name: redis, version: "`+release+`"}]
stemcells: [{alias: default, os: ubuntu-jammy, version: "1.506"}]
instance_groups:
- name: redis
  instances: 1
  azs: [z1]
  vm_type: small
  stemcell: default
  networks: [{name: services}]
  jobs: [{name: redis, release: redis, properties: {password: {{ .Secrets.password }}}}]
`)
	Expect(err).NotTo(HaveOccurred())
	return tpl
}

// upgradeCatalog has redis-small at maintenance_info version, deploying release.
func upgradeCatalog(version, release string) *catalog.Catalog {
	return &catalog.Catalog{Services: []catalog.Service{{ID: "redis", Name: "redis", Bindable: true, Plans: []catalog.Plan{
		{ID: "redis-small", Name: "small", ServiceID: "redis", Manifest: upgradeTemplate(release),
			MaintenanceInfo: &catalog.MaintenanceInfo{Version: version}},
	}}}}
}

// fleet is an estate of broker-provisioned instances on the simulator and
// a real Vault, with the broker and the reconciler of a catalog.
type fleet struct {
	e   *env
	b   *broker.Broker
	m   *reconciler.Manager
	reg *prometheus.Registry
	ids []string
	// clock, when set, is the broker's and the reconciler's (use).
	clock *skewedClock
}

// skewedClock is real time moved on by what a spec advances it: never
// behind the real time the simulators and Vault keep, it lets a spec take
// hours of the reconciler's time in moments.
type skewedClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *skewedClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// advance moves the clock on by d.
func (c *skewedClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
}

func newFleet(n int, change func(*config.ReconcilerConfig)) *fleet {
	GinkgoHelper()
	return newFleetOn(sim.Options{TaskDuration: 150 * time.Millisecond}, n, change)
}

// newFleetOn is newFleet on a Director simulator with options o.
func newFleetOn(o sim.Options, n int, change func(*config.ReconcilerConfig)) *fleet {
	GinkgoHelper()
	f := &fleet{e: newEnv(envOptions{sim: o, config: change})}
	f.use(upgradeCatalog("1.0.0", "16.1.0"), nil)
	ctx := context.Background()
	for i := range n {
		id := []string{"0a1b2c3d-0000-4000-8000-00000000000", "1a1b2c3d-0000-4000-8000-00000000000"}[i%2] + string(rune('a'+i))
		_, err := f.b.Provision(ctx, id, domain.ProvisionDetails{ServiceID: "redis", PlanID: "redis-small",
			OrganizationGUID: "org", SpaceGUID: "space"}, true)
		Expect(err).NotTo(HaveOccurred())
		f.ids = append(f.ids, id)
	}
	for _, id := range f.ids {
		Eventually(func() domain.LastOperationState {
			op, _ := f.b.LastOperation(ctx, id, domain.PollDetails{})
			return op.State
		}, 15*time.Second, 50*time.Millisecond).Should(Equal(domain.Succeeded))
	}
	Expect(f.e.run(report.RunOptions{}).Errors).To(BeEmpty())
	return f
}

// use makes the broker and the reconciler serve cat; change tunes the
// reconciler's options (may be nil).
func (f *fleet) use(cat *catalog.Catalog, change func(*reconciler.Options)) {
	GinkgoHelper()
	var err error
	opts := broker.Options{Catalog: cat, Directors: []broker.NamedDirector{{Director: f.e.bosh, Reader: f.e.bosh}},
		Store: f.e.store, Username: "u", Password: "p", Logger: testLogger()}
	if f.clock != nil {
		opts.Now = f.clock.now
	}
	f.b, err = broker.New(opts)
	Expect(err).NotTo(HaveOccurred())
	f.reg = prometheus.NewRegistry()
	f.m = f.e.newManagerWith(func(o *reconciler.Options) {
		o.Directors[0].Deployer = f.e.bosh
		o.Catalog, o.Renderer, o.Operations, o.Registerer = cat, f.b, f.b, f.reg
		o.Hold = f.b.HoldInstance
		o.UpgradePoll = 20 * time.Millisecond
		if f.clock != nil {
			o.Now = f.clock.now
		}
		if change != nil {
			change(o)
		}
	})
	f.e.m = f.m
}

func (f *fleet) deployment(id string) string { return vault.DeploymentName("redis-small", id) }

func (f *fleet) running(id string) string {
	GinkgoHelper()
	text, err := f.e.bosh.Manifest(context.Background(), f.deployment(id))
	Expect(err).NotTo(HaveOccurred())
	return text
}

func (f *fleet) upgrade(req reconciler.UpgradeRequest) report.UpgradeReport {
	GinkgoHelper()
	rep, err := f.m.Upgrades().Run(context.Background(), req)
	Expect(err).NotTo(HaveOccurred())
	return rep
}

func states(rep report.UpgradeReport) map[string]string {
	out := map[string]string{}
	for _, r := range rep.Instances {
		out[r.InstanceID] = r.State
	}
	return out
}

func eventKinds(id string, store *vault.Store) []string {
	GinkgoHelper()
	events, err := store.Events(context.Background(), id, 0)
	Expect(err).NotTo(HaveOccurred())
	var out []string
	for _, ev := range events {
		out = append(out, ev.Kind)
	}
	return out
}

func intp(n int) *int { return &n }

var _ = Describe("fleet upgrades (what should run, made to run)", func() {
	ctx := context.Background()

	It("lists every instance of a plan whose version was raised, and upgrades them canary first within max_in_flight, keeping every secret", func() {
		f := newFleet(5, nil)
		before := map[string]string{}
		for _, id := range f.ids {
			before[id] = f.running(id)
		}
		f.use(upgradeCatalog("2.0.0", "16.2.0"), nil)
		f.e.sim.ResetStats()
		s := f.e.run(report.RunOptions{})
		Expect(s.Outdated.Count).To(Equal(5), "the next run lists them")
		Expect(f.e.sim.Stats().Tasks).To(BeZero(), "and changes nothing")

		By("a dry run lists them and writes nothing")
		writes := f.e.vaultWrites()
		dry := f.upgrade(reconciler.UpgradeRequest{DryRun: true})
		Expect(dry.Counts).To(Equal(map[string]int{"would_upgrade": 5}))
		Expect(dry.Done()).To(BeTrue())
		Expect(f.e.vaultWrites()).To(Equal(writes))
		Expect(f.e.sim.Stats().Tasks).To(BeZero())

		By("the fleet upgrade")
		var mu sync.Mutex
		var heard []string
		rep := f.upgrade(reconciler.UpgradeRequest{MaxInFlight: intp(2), Canaries: intp(1), Trigger: "command",
			Progress: func(r report.UpgradeResult) {
				mu.Lock()
				heard = append(heard, r.InstanceID+" "+r.State)
				mu.Unlock()
			}})
		Expect(rep.Counts).To(Equal(map[string]int{"upgraded": 5}), "%+v", rep.Instances)
		Expect(rep.Done()).To(BeTrue())
		Expect(rep.Instances[0].Canary).To(BeTrue())
		Expect(rep.Instances[1].Canary).To(BeFalse())
		Expect(heard).To(HaveLen(10), "each instance started and ended")

		log := f.e.sim.TaskLog()
		Expect(log).To(HaveLen(5))
		Expect(log[0].Deployment).To(Equal(rep.Instances[0].Deployment), "the canary first")
		for _, t := range log[1:] {
			Expect(t.Began).To(BeTemporally(">=", log[0].Ended), "the others wait for the canary")
			Expect(t.ContextID).To(HavePrefix("blacksmith-upgrade-"))
		}
		Expect(sim.MaxOverlap(log)).To(Equal(2), "max_in_flight at once, never more")

		for _, id := range f.ids {
			now := f.running(id)
			Expect(now).To(ContainSubstring("16.2.0"))
			Expect(password(now)).To(Equal(password(before[id])), "the existing secret, never a new one")
			rec, err := f.e.store.Record(ctx, id)
			Expect(err).NotTo(HaveOccurred())
			Expect(rec.MaintenanceVersion).To(Equal("2.0.0"))
			Expect(rec.LastOperation).To(HaveField("Type", "provision"), "the record's operation is put back")
			stored, _, _ := f.e.store.Manifest(ctx, id)
			Expect(stored).To(Equal(now), "Vault records what runs")
			Expect(eventKinds(id, f.e.store)[0]).To(Equal("upgraded"))
		}
		Expect(counter(f.reg, "blacksmith_upgrades_total", map[string]string{"result": "upgraded"})).To(Equal(5.0))
		Expect(counter(f.reg, "blacksmith_upgrades_in_flight", nil)).To(BeZero())

		next := f.e.run(report.RunOptions{Force: true})
		Expect(next.Drift).To(BeZero(), "the reconciler finds nothing to undo")
		Expect(next.Outdated.Count).To(BeZero())
	})

	It("records only the version when the plan's manifest is what runs", func() {
		f := newFleet(2, nil)
		f.use(upgradeCatalog("1.1.0", "16.1.0"), nil)
		f.e.sim.ResetStats()
		rep := f.upgrade(reconciler.UpgradeRequest{})
		Expect(rep.Counts).To(Equal(map[string]int{"unchanged": 2}))
		Expect(f.e.sim.Stats().Tasks).To(BeZero(), "no task")
		rec, _ := f.e.store.Record(ctx, f.ids[0])
		Expect(rec.MaintenanceVersion).To(Equal("1.1.0"))
	})

	It("rolls a failed upgrade back to the backup's manifest, quarantines the instance and starts no other", func() {
		f := newFleet(3, nil)
		f.use(upgradeCatalog("2.0.0", "16.2.0"), nil)
		first := f.upgrade(reconciler.UpgradeRequest{DryRun: true}).Instances[0].InstanceID
		previous := f.running(first)
		f.e.sim.FailNextTask(f.deployment(first))
		f.e.sim.ResetStats()
		rep := f.upgrade(reconciler.UpgradeRequest{})
		Expect(states(rep)).To(HaveKeyWithValue(first, "rolled_back"))
		Expect(rep.Counts).To(Equal(map[string]int{"rolled_back": 1, "pending": 2}), "a failed canary stops the fleet")
		Expect(rep.Stopped).To(ContainSubstring("canary"))
		Expect(rep.Done()).To(BeFalse())
		Expect(f.running(first)).To(Equal(previous), "the previous manifest, read back from the Director")
		log := f.e.sim.TaskLog()
		Expect(log).To(HaveLen(2))
		Expect(log[0].State).To(Equal("error"))
		Expect(log[1].State).To(Equal("done"))
		Expect(eventKinds(first, f.e.store)[:2]).To(Equal([]string{"rolled_back", "upgrade_failed"}))
		rec, _ := f.e.store.Record(ctx, first)
		Expect(rec.MaintenanceVersion).To(Equal("1.0.0"), "the version is not recorded")
		Expect(rec.OperationInProgress()).To(BeFalse())
		Expect(counter(f.reg, "blacksmith_upgrades_total", map[string]string{"result": "rolled_back"})).To(Equal(1.0))

		By("the quarantine keeps it out of the next fleet upgrade, unless it is named")
		st, err := f.m.Upgrades().Status(ctx)
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Quarantined).To(ConsistOf(And(HaveField("InstanceID", first), HaveField("State", "rolled_back"), HaveField("Failures", 1))))
		again := f.upgrade(reconciler.UpgradeRequest{})
		Expect(states(again)).To(HaveKeyWithValue(first, "skipped"))
		Expect(again.Counts).To(HaveKeyWithValue("upgraded", 2))
		named := f.upgrade(reconciler.UpgradeRequest{Scope: report.UpgradeScope{Instances: []string{first}}})
		Expect(named.Counts).To(Equal(map[string]int{"upgraded": 1}))
		st, _ = f.m.Upgrades().Status(ctx)
		Expect(st.Quarantined).To(BeEmpty(), "upgraded: released")
	})

	It("reports a rollback that fails too", func() {
		f := newFleet(1, nil)
		f.use(upgradeCatalog("2.0.0", "16.2.0"), nil)
		f.e.sim.FailNextTask(f.deployment(f.ids[0]))
		f.e.sim.FailNextTask(f.deployment(f.ids[0]))
		rep := f.upgrade(reconciler.UpgradeRequest{})
		Expect(rep.Instances).To(ConsistOf(And(HaveField("State", "rollback_failed"), HaveField("Reason", ContainSubstring("the rollback failed too")))))
		Expect(eventKinds(f.ids[0], f.e.store)[:2]).To(Equal([]string{"rollback_failed", "upgrade_failed"}))
		Expect(counter(f.reg, "blacksmith_upgrades_total", map[string]string{"result": "rollback_failed"})).To(Equal(1.0))
	})

	It("fails an instance whose template no longer renders for its parameters, deploying nothing", func() {
		f := newFleet(1, nil)
		broken, err := catalog.ParseTemplate("manifest.yml", "name: x\nport: {{ .Params.port.missing }}\n")
		Expect(err).NotTo(HaveOccurred())
		cat := upgradeCatalog("2.0.0", "16.2.0")
		cat.Services[0].Plans[0].Manifest = broken
		f.use(cat, nil)
		f.e.sim.ResetStats()
		writes := f.e.vaultWrites()
		dry := f.upgrade(reconciler.UpgradeRequest{DryRun: true})
		Expect(dry.Instances).To(ConsistOf(HaveField("State", "failed")), "a dry run says so")
		Expect(f.e.vaultWrites()).To(Equal(writes), "and writes nothing, not even the quarantine")
		rep := f.upgrade(reconciler.UpgradeRequest{})
		Expect(rep.Instances).To(ConsistOf(And(HaveField("State", "failed"), HaveField("Reason", ContainSubstring("do not render")))))
		Expect(f.e.sim.Stats().Tasks).To(BeZero())
		st, err := f.m.Upgrades().Status(context.Background())
		Expect(err).NotTo(HaveOccurred())
		Expect(st.Quarantined).To(ConsistOf(And(HaveField("InstanceID", f.ids[0]), HaveField("State", "failed"))),
			"set aside: not tried again every run")
		again := f.upgrade(reconciler.UpgradeRequest{})
		Expect(again.Instances).To(ConsistOf(And(HaveField("State", "skipped"), HaveField("Reason", ContainSubstring("quarantined until")))))
	})

	It("skips an instance whose operation is in progress once its attempts are spent", func() {
		f := newFleet(2, nil)
		f.use(upgradeCatalog("2.0.0", "16.2.0"), nil)
		busy := f.ids[0]
		_, err := f.e.store.Update(ctx, map[string]vault.Change{busy: func(r *vault.Record) (*vault.Record, error) {
			next := r.Clone()
			next.LastOperation = &vault.Operation{Type: "update", State: vault.OperationInProgress, ContextID: "blacksmith-update-x"}
			return next, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		rep := f.upgrade(reconciler.UpgradeRequest{AttemptLimit: intp(2)})
		Expect(states(rep)).To(Equal(map[string]string{busy: "skipped", f.ids[1]: "upgraded"}))
		for _, r := range rep.Instances {
			if r.InstanceID == busy {
				Expect(r.Attempts).To(Equal(2))
				Expect(r.Reason).To(ContainSubstring("busy at each of 2 attempts"))
			}
		}
		Expect(rep.Done()).To(BeFalse())
	})

	It("finishes an upgrade whose wait was cut at the next fleet upgrade", func() {
		f := newFleet(1, nil)
		f.use(upgradeCatalog("2.0.0", "16.2.0"), nil)
		f.e.sim.Knobs().SetTaskDuration(2 * time.Second)
		f.e.sim.ResetStats()
		cut, cancel := context.WithCancel(ctx)
		go func() {
			defer GinkgoRecover()
			Eventually(func() int { return f.e.sim.Stats().TaskStates[sim.StateProcessing] }, 5*time.Second, 5*time.Millisecond).Should(Equal(1))
			cancel()
		}()
		rep, err := f.m.Upgrades().Run(cut, reconciler.UpgradeRequest{})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Instances).To(ConsistOf(HaveField("State", "interrupted")))
		rec, _ := f.e.store.Record(ctx, f.ids[0])
		Expect(rec.OperationInProgress()).To(BeTrue(), "the operation stays in progress: the broker refuses other operations")
		st, _ := f.m.Upgrades().Status(ctx)
		Expect(st.InFlight).To(ConsistOf(HaveField("InstanceID", f.ids[0])))

		next := f.upgrade(reconciler.UpgradeRequest{})
		Expect(next.Resumed).To(ConsistOf(HaveField("State", "upgraded")))
		Expect(next.Counts).To(HaveKeyWithValue("upgraded", 1))
		rec, _ = f.e.store.Record(ctx, f.ids[0])
		Expect(rec.MaintenanceVersion).To(Equal("2.0.0"))
		Expect(rec.OperationInProgress()).To(BeFalse())
	})

	It("upgrades in the background after each run, at most max_per_run a run", func() {
		f := newFleet(3, nil)
		f.use(upgradeCatalog("2.0.0", "16.2.0"), func(o *reconciler.Options) {
			o.Config.Upgrades.Mode, o.Config.Upgrades.MaxPerRun = config.UpgradeAuto, 2
		})
		runCtx, stop := context.WithCancel(ctx)
		done := serveParts(runCtx, append(runsAndWatch(f.m), f.m.Upgrades())...)
		DeferCleanup(func() { stop(); <-done })
		var st reconciler.UpgradeStatus
		Eventually(func() bool {
			st, _ = f.m.Upgrades().Status(ctx)
			return st.Current != nil && !st.Current.Running
		}, 20*time.Second, 50*time.Millisecond).Should(BeTrue())
		Expect(st.Current.Trigger).To(Equal("background"))
		Expect(st.Current.Counts).To(Equal(map[string]int{"upgraded": 2, "pending": 1}))
		Expect(st.Current.Stopped).To(ContainSubstring("2 instances tried"))
	})

	It("starts no upgrade on a follower", func() {
		f := newFleet(1, nil)
		const ttl = 900 * time.Millisecond
		f.use(upgradeCatalog("2.0.0", "16.2.0"), func(o *reconciler.Options) {
			o.HA = &reconciler.HAOptions{Leases: f.e.store.Leases, ID: "vm-b", TTL: ttl}
		})
		_, err := f.e.store.Leases.AcquireLease(ctx, "reconciler", "vm-a", time.Minute, time.Now())
		Expect(err).NotTo(HaveOccurred())
		f.e.sim.ResetStats()
		_, err = f.m.Upgrades().Run(ctx, reconciler.UpgradeRequest{})
		var nl *reconciler.NotLeaderError
		Expect(errors.As(err, &nl)).To(BeTrue(), "%v", err)
		_, err = f.m.Upgrades().Start(reconciler.UpgradeRequest{})
		Expect(errors.As(err, &nl)).To(BeTrue(), "%v", err)
		Expect(f.e.sim.Stats().Tasks).To(BeZero())
	})
})

// password is the redis password a manifest sets.
func password(manifest string) string {
	_, rest, _ := strings.Cut(manifest, "password: ")
	line, _, _ := strings.Cut(rest, "\n")
	return line
}

var _ = Describe("a catalog whose plan's version went down", func() {
	It("is refused by a fleet upgrade, naming the plan's file; nothing is deployed", func() {
		f := newFleet(1, nil)
		cat := upgradeCatalog("0.9.0", "16.2.0")
		cat.Services[0].Plans[0].Source = "/var/vcap/data/blacksmith/catalog/0/redis/small/plan.yml"
		f.use(cat, nil)
		f.e.sim.ResetStats()
		rep, err := f.m.Upgrades().Run(context.Background(), reconciler.UpgradeRequest{})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Error).To(ContainSubstring("/var/vcap/data/blacksmith/catalog/0/redis/small/plan.yml: maintenance_info.version: " +
			"0.9.0 is lower than 1.0.0, which instance(s) " + f.ids[0] + " record"))
		Expect(rep.Done()).To(BeFalse())
		Expect(f.e.sim.Stats().Tasks).To(BeZero())

		s, _ := f.m.RunOnce(context.Background(), report.RunOptions{})
		Expect(s.Errors).To(ContainElement(ContainSubstring("the catalog: /var/vcap/data/blacksmith/catalog/0/redis/small/plan.yml: "+
			"maintenance_info.version: 0.9.0 is lower than 1.0.0")), "each run reports it too")
	})
})

var _ = Describe("an upgrade without a backup to roll back to", func() {
	It("is skipped when backups are off: nothing is deployed", func() {
		f := newFleet(1, nil)
		noBackups, err := vault.New(context.Background(), vault.Options{Address: vaultServer.Addr, Token: vaultServer.Token,
			Mount: f.e.mount, Backup: &vault.BackupOptions{Enabled: false}, Logger: testLogger()})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(noBackups.Close)
		f.use(upgradeCatalog("2.0.0", "16.2.0"), func(o *reconciler.Options) { o.Store = noBackups })
		f.e.sim.ResetStats()
		rep, err := f.m.Upgrades().Run(context.Background(), reconciler.UpgradeRequest{})
		Expect(err).NotTo(HaveOccurred())
		Expect(rep.Instances).To(ConsistOf(And(HaveField("State", "skipped"),
			HaveField("Reason", ContainSubstring("reconciler.backup.enabled is false")))))
		Expect(f.e.sim.Stats().Tasks).To(BeZero())
		rec, _ := f.e.store.Record(context.Background(), f.ids[0])
		Expect(rec.OperationInProgress()).To(BeFalse())
	})
})

var _ = Describe("an upgrade whose Director cannot be reached", func() {
	It("is skipped with the reason, nothing marked or deployed", func() {
		f := newFleet(1, nil)
		f.use(upgradeCatalog("2.0.0", "16.2.0"), nil)
		Expect(f.e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name", Status: 503})).To(Succeed())
		f.e.sim.ResetStats()
		rep := f.upgrade(reconciler.UpgradeRequest{})
		Expect(rep.Instances).To(ConsistOf(And(HaveField("State", "skipped"),
			HaveField("Reason", ContainSubstring("Director default cannot be reached")))))
		Expect(f.e.sim.Stats().Tasks).To(BeZero())
		rec, _ := f.e.store.Record(context.Background(), f.ids[0])
		Expect(rec.OperationInProgress()).To(BeFalse())
		Expect(rec.MaintenanceVersion).To(Equal("1.0.0"))
	})
})

var _ = Describe("an upgrade with HA", func() {
	It("holds the instance's lease: an instance whose lease another daemon holds is busy, then skipped", func() {
		f := newFleet(1, nil)
		cat := upgradeCatalog("2.0.0", "16.2.0")
		shared, err := broker.New(broker.Options{Catalog: cat, Directors: []broker.NamedDirector{{Director: f.e.bosh, Reader: f.e.bosh}},
			Store: f.e.store, Username: "u", Password: "p", Logger: testLogger(),
			SharedLimits: f.e.store.Leases, HolderID: "vm-a", InstanceLeaseWait: 100 * time.Millisecond})
		Expect(err).NotTo(HaveOccurred())
		f.use(cat, func(o *reconciler.Options) {
			o.Hold = func(ctx context.Context, id string) (context.Context, func(), error) {
				ctx, release, err := shared.HoldInstance(ctx, id)
				if errors.Is(err, broker.ErrInstanceBusy) {
					err = fmt.Errorf("%w: %w", reconciler.ErrInstanceBusy, err)
				}
				return ctx, release, err
			}
		})
		_, err = f.e.store.Leases.AcquireLease(context.Background(), "instance-"+f.ids[0], "vm-b", time.Minute, time.Now())
		Expect(err).NotTo(HaveOccurred())
		f.e.sim.ResetStats()
		rep := f.upgrade(reconciler.UpgradeRequest{AttemptLimit: intp(2)})
		Expect(rep.Instances).To(ConsistOf(And(HaveField("State", "skipped"), HaveField("Attempts", 2),
			HaveField("Reason", ContainSubstring("another broker holds the instance's lease")))))
		Expect(f.e.sim.Stats().Tasks).To(BeZero())

		Expect(f.e.store.Leases.ReleaseLease(context.Background(), "instance-"+f.ids[0], "vm-b")).To(Succeed())
		Expect(f.upgrade(reconciler.UpgradeRequest{}).Counts).To(Equal(map[string]int{"upgraded": 1}), "once it is free")
		l, held, err := f.e.store.Leases.ReadLease(context.Background(), "instance-"+f.ids[0])
		Expect(err).NotTo(HaveOccurred())
		Expect(!held || l.Holder == "").To(BeTrue(), "given back: %+v", l)
	})
})
