package reconciler_test

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// heard keeps the events a reconciler notifies.
type heard struct {
	mu     sync.Mutex
	events []notify.Event
}

func (h *heard) Notify(e notify.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, e)
}

func (h *heard) of(types ...string) []notify.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []notify.Event
	for _, e := range h.events {
		for _, t := range types {
			if e.Type == t {
				out = append(out, e)
			}
		}
	}
	return out
}

// serveHealth runs m's health loop until the spec ends.
func serveHealth(m *reconciler.Manager) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = m.Health().Serve(ctx) }()
	DeferCleanup(func() { cancel(); <-done })
}

// settled waits until m's health loop has nothing due, nothing running and
// everything it learnt written.
func settled(m *reconciler.Manager) report.HealthLoopStatus {
	GinkgoHelper()
	var st report.HealthLoopStatus
	since := m.Health().Status().Ticks + 1 // a tick that began after the call
	Eventually(func() bool { st = m.Health().Status(); return st.Idle && st.Ticks > since }).WithTimeout(20 * time.Second).Should(BeTrue())
	return st
}

var _ = Describe("VM health", func() {
	var (
		e     *env
		h     *heard
		clock atomic.Int64
	)
	const interval = time.Hour
	BeforeEach(func() {
		h = &heard{}
		clock.Store(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC).UnixNano())
		e = newEnv(envOptions{seed: 8, sim: sim.Options{TaskDuration: 5 * time.Millisecond}, config: func(c *config.ReconcilerConfig) {
			c.Interval, c.HealthSweep = interval, 4*interval
		}})
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			o.Notifier, o.HealthPoll, o.HealthTick, o.Registerer = h, 10*time.Millisecond, 5*time.Millisecond, e.reg
			o.Now = func() time.Time { return time.Unix(0, clock.Load()) }
		})
		serveHealth(e.m)
	})
	next := func() report.Summary { // the next scheduled run, one interval later, and the loop's work it hands over
		GinkgoHelper()
		clock.Add(int64(interval))
		s := e.run(report.RunOptions{})
		settled(e.m)
		return s
	}
	unhealthy := func() int { return e.m.Status().Health.Unhealthy }

	It("sweeps every deployment once per health_sweep, one task at a time spread over each slot, and finds what no event told", func() {
		failing := e.names[5]
		Expect(e.sim.SetAgent(failing, e.sim.InstanceIDs(failing, "")[0], sim.AgentFailing)).To(Succeed(), "no event: only a sweep sees it")
		Expect(e.run(report.RunOptions{}).Health.Handed).To(BeZero(), "records every instance: the index it started from had none")
		s := e.run(report.RunOptions{}) // hands them to the loop
		Expect(s.Health).To(And(HaveField("Handed", 8), HaveField("Named", 0)))
		st := settled(e.m).Directors[0]
		Expect(st.Started).To(BeNumerically("<=", 1), "the slot's share is spread over the slot: at most its first is due")
		e.sim.ResetStats()
		for range 39 { // four slots, a tenth of one at a time, short of the next sweep's start
			clock.Add(int64(interval / 10))
			st = settled(e.m).Directors[0]
		}
		Expect(st.Swept).To(Equal(8), "each of the 8 once in the 4 slots of a sweep")
		Expect(st.MostAtOnce).To(Equal(1), "reconciler.health.tasks_at_once")
		Expect(st).To(And(HaveField("Failed", 0), HaveField("HeldOff", 0)))
		Expect(e.sim.Stats().Requests).To(HaveKeyWithValue("GET /deployments/:name/vms", BeNumerically(">=", 7)))
		hs := e.m.Status().Health
		Expect(hs.Unhealthy).To(Equal(1))
		Expect(hs.Instances[0]).To(And(HaveField("InstanceID", instanceID(failing)), HaveField("Deployment", failing)))
		Expect(hs.Instances[0].VMs[0]).To(HaveField("JobState", "failing"))
		Expect(h.of(notify.Unhealthy)).To(HaveLen(1))
		Expect(counter(e.reg, "blacksmith_health_checks_total", map[string]string{"director": "default", "result": "answered"})).To(BeNumerically(">=", 8))
	})

	It("shows an instance whose agent stops answering unhealthy once the loop asks, announces it once, and its recovery", func() {
		victim := e.names[2]
		id := instanceID(victim)
		e.run(report.RunOptions{})
		Expect(e.sim.SetAgent(victim, e.sim.InstanceIDs(victim, "")[0], sim.AgentUnresponsive)).To(Succeed())

		s := next()
		Expect(s.Health.Named).To(Equal(1), "the Health Monitor's alert names the deployment")
		Expect(unhealthy()).To(Equal(1))
		view, err := e.m.Views().Instance(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
		Expect(view.Health.Status).To(Equal("unhealthy"))
		Expect(view.Health.Reason).To(ContainSubstring("unresponsive agent"))
		since := *view.Health.Since
		Expect(counter(e.reg, "blacksmith_instances_unhealthy", nil)).To(Equal(1.0))
		Expect(h.of(notify.Unhealthy)).To(ConsistOf(And(HaveField("InstanceID", id), HaveField("Deployment", victim),
			HaveField("Reason", ContainSubstring("unresponsive agent")), HaveField("Director", "default"))))

		next() // still unhealthy: asked again, not announced again, since kept
		Expect(h.of(notify.Unhealthy)).To(HaveLen(1))
		view, _ = e.m.Views().Instance(context.Background(), id)
		Expect(*view.Health.Since).To(BeTemporally("==", since))

		Expect(e.sim.Resurrect(victim, e.sim.InstanceIDs(victim, "")[0])).To(Succeed())
		next()
		Expect(unhealthy()).To(BeZero())
		view, _ = e.m.Views().Instance(context.Background(), id)
		Expect(view.Health.Status).To(Equal("healthy"))
		Expect(counter(e.reg, "blacksmith_instances_unhealthy", nil)).To(BeZero())
		Expect(h.of(notify.Recovered)).To(ConsistOf(HaveField("InstanceID", id)))
		Expect(h.of(notify.Unhealthy)).To(HaveLen(1))
	})

	It("does not call an instance stopped on purpose unhealthy", func() {
		e.run(report.RunOptions{})
		stopped := e.names[1]
		e.changeState(stopped, "*", "stopped")
		s := next()
		Expect(s.Health.Named).To(Equal(1), "the stop's instance events name it")
		Expect(unhealthy()).To(BeZero())
		Expect(h.of(notify.Unhealthy)).To(BeEmpty())
	})

	It("keeps the last word when the Director cannot say", func() {
		e.run(report.RunOptions{})
		victim := e.names[1]
		Expect(e.sim.SetAgent(victim, e.sim.InstanceIDs(victim, "")[0], sim.AgentUnresponsive)).To(Succeed())
		next()
		Expect(unhealthy()).To(Equal(1))
		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "/deployments/:name/vms", Method: "GET"})).To(Succeed())
		next()
		Expect(e.m.Health().Status().Directors[0].Failed).To(BeNumerically(">=", 1))
		Expect(unhealthy()).To(Equal(1), "not read: stays unhealthy, not recovered")
		Expect(h.of(notify.Recovered)).To(BeEmpty())
	})

	It("asks again at the next handover a deployment whose check failed, though no event names it any more", func() {
		e.run(report.RunOptions{})
		victim := e.names[3]
		Expect(e.sim.SetAgent(victim, e.sim.InstanceIDs(victim, "")[0], sim.AgentUnresponsive)).To(Succeed())
		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "/tasks/:id/output"})).To(Succeed()) // the checks alone read it
		next()
		Expect(e.m.Health().Status().Directors[0].Failed).To(BeNumerically(">=", 1))
		Expect(unhealthy()).To(BeZero())
		e.sim.Faults().Clear()
		s := next()
		Expect(s.Health.Named).To(BeZero(), "no event names it any more")
		Expect(unhealthy()).To(Equal(1), "pending from the failed check")
	})

	It("leaves a deployment a task holds for later, holds off while the broker has a task queued, and hands nothing over in a dry or scoped run", func() {
		e.run(report.RunOptions{})
		settled(e.m)
		busy := e.names[4]
		Expect(e.sim.SetAgent(busy, e.sim.InstanceIDs(busy, "")[0], sim.AgentUnresponsive)).To(Succeed())
		e.sim.Knobs().SetTaskDuration(time.Hour)
		_, err := e.bosh.Deploy(context.Background(), []byte(e.manifest(busy)))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() bool {
			list, _ := e.bosh.Deployments(context.Background())
			for _, d := range list {
				if d.Name == busy {
					return d.Locked
				}
			}
			return false
		}).Should(BeTrue())
		e.sim.Knobs().SetTaskDuration(5 * time.Millisecond) // the checks' tasks
		next()
		Expect(unhealthy()).To(BeZero(), "not asked while its task runs")
		Expect(e.m.Health().Status().Directors[0].Busy).To(BeNumerically(">=", 1))

		started := e.m.Health().Status().Directors[0].Started
		e.sim.Knobs().SetTaskDuration(time.Hour)
		for _, name := range e.names[5:8] { // three more of the broker's: two run beside the first, one stays queued (3 workers)
			_, err := e.bosh.Deploy(context.Background(), []byte(e.manifest(name)))
			Expect(err).NotTo(HaveOccurred())
		}
		e.sim.Knobs().SetTaskDuration(5 * time.Millisecond)
		clock.Add(int64(interval))
		Expect(e.run(report.RunOptions{}).Health.Named).To(BeNumerically(">=", 0))
		Eventually(func() int { return e.m.Health().Status().Directors[0].HeldOff }).Should(BeNumerically(">=", 1))
		Expect(e.m.Health().Status().Directors[0].Started).To(Equal(started), "no vm-state task while the broker's deploy waits")

		Expect(e.run(report.RunOptions{DryRun: true}).Health).To(BeNil())
		Expect(e.run(report.RunOptions{Scope: report.Scope{Instance: instanceID(busy)}}).Health).To(BeNil())
	})

	It("drops the entry of an instance whose deployment and record are gone", func() {
		e.run(report.RunOptions{})
		gone := e.names[6]
		Expect(e.sim.SetAgent(gone, e.sim.InstanceIDs(gone, "")[0], sim.AgentUnresponsive)).To(Succeed())
		next()
		Expect(unhealthy()).To(Equal(1))
		e.sim.RemoveDeployment(gone)
		s := next()
		Expect(s.Health.Gone).To(Equal(1))
		Expect(unhealthy()).To(BeZero())
	})
})

var _ = Describe("the health loop beside the runs", func() {
	It("does not keep the run waiting: the run hands over and ends while an unresponsive agent holds the loop's task", func() {
		e := newEnv(envOptions{seed: 4, sim: sim.Options{TaskDuration: 5 * time.Millisecond, AgentTimeout: time.Hour}}) // the agent never answers within the spec
		var clock atomic.Int64
		clock.Store(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC).UnixNano())
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			o.HealthPoll, o.HealthTick = 10*time.Millisecond, 5*time.Millisecond
			o.Now = func() time.Time { return time.Unix(0, clock.Load()) }
		})
		serveHealth(e.m)
		e.run(report.RunOptions{})
		settled(e.m)
		victim := e.names[2]
		Expect(e.sim.SetAgent(victim, e.sim.InstanceIDs(victim, "")[0], sim.AgentUnresponsive)).To(Succeed())
		clock.Add(int64(time.Hour))
		s := e.run(report.RunOptions{})
		Expect(s.Health.Named).To(Equal(1), "the Health Monitor's alert names it")
		Expect(s.Result).To(Equal("success"))
		Eventually(func() int { return e.m.Health().Status().Directors[0].InFlight }).Should(Equal(1))
		again := e.run(report.RunOptions{Force: true})
		Expect(again.Result).To(Equal("success"), "a run while the loop's task runs")
		Expect(e.m.Health().Status().Directors[0]).To(And(HaveField("InFlight", 1), HaveField("MostAtOnce", 1)),
			"still the one task: the budget holds whatever the runs hand over")
	})
})
