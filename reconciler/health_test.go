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
			o.Notifier, o.HealthPoll, o.Registerer = h, 10*time.Millisecond, e.reg
			o.Now = func() time.Time { return time.Unix(0, clock.Load()) }
		})
	})
	next := func() reconciler.Summary { // the next scheduled run, one interval later
		GinkgoHelper()
		clock.Add(int64(interval))
		return e.run(reconciler.RunOptions{})
	}

	It("sweeps every deployment once per health_sweep, a share per run, and finds what no event told", func() {
		failing := e.names[5]
		Expect(e.sim.SetAgent(failing, e.sim.InstanceIDs(failing, "")[0], sim.AgentFailing)).To(Succeed(), "no event: only a sweep sees it")
		e.run(reconciler.RunOptions{}) // records every instance
		e.sim.ResetStats()
		checked, unhealthy := 0, 0
		for range 4 {
			s := next()
			Expect(s.Health).NotTo(BeNil())
			Expect(s.Health.Slots).To(Equal(int64(4)))
			Expect(s.Health.Checked-s.Health.Swept).To(BeNumerically("<=", unhealthy), "the sweep's share, and the unhealthy asked again")
			checked, unhealthy = checked+s.Health.Swept, s.Health.Unhealthy
		}
		Expect(checked).To(Equal(8+0), "each of the 8 once in the 4 runs of a sweep")
		Expect(e.sim.Stats().Requests).To(HaveKeyWithValue("GET /deployments/:name/vms", BeNumerically(">=", 8)))
		st := e.m.Status().Health
		Expect(st.Unhealthy).To(Equal(1))
		Expect(st.Instances[0]).To(And(HaveField("InstanceID", instanceID(failing)), HaveField("Deployment", failing)))
		Expect(st.Instances[0].VMs[0]).To(HaveField("JobState", "failing"))
		Expect(h.of(notify.Unhealthy)).To(HaveLen(1))
	})

	It("does not sweep again in a run forced within the same slot", func() {
		e.run(reconciler.RunOptions{})
		first := next()
		for i := 1; i < 4 && first.Health.Swept == 0; i++ { // the names are random: a slot may hold none of them
			first = next()
		}
		Expect(first.Health.Swept).To(BeNumerically(">", 0), "8 over 4 slots: one of them holds some")
		again := e.run(reconciler.RunOptions{Force: true})
		Expect(again.Health.Swept).To(BeZero())
		Expect(first.Health.Slot).To(Equal(again.Health.Slot))
	})

	It("shows an instance whose agent stops answering unhealthy at the next run, announces it once, and its recovery", func() {
		victim := e.names[2]
		id := instanceID(victim)
		e.run(reconciler.RunOptions{})
		Expect(e.sim.SetAgent(victim, e.sim.InstanceIDs(victim, "")[0], sim.AgentUnresponsive)).To(Succeed())

		s := next()
		Expect(s.Health.Named).To(Equal(1), "the Health Monitor's alert names the deployment")
		Expect(s.Health).To(And(HaveField("Unhealthy", 1), HaveField("BecameUnhealthy", 1)))
		view, err := e.m.Instance(context.Background(), id)
		Expect(err).NotTo(HaveOccurred())
		Expect(view.Health.Status).To(Equal("unhealthy"))
		Expect(view.Health.Reason).To(ContainSubstring("unresponsive agent"))
		since := *view.Health.Since
		Expect(e.m.Status().Health.Unhealthy).To(Equal(1))
		Expect(counter(e.reg, "blacksmith_instances_unhealthy", nil)).To(Equal(1.0))
		Expect(h.of(notify.Unhealthy)).To(ConsistOf(And(HaveField("InstanceID", id), HaveField("Deployment", victim),
			HaveField("Reason", ContainSubstring("unresponsive agent")))))

		next() // still unhealthy: checked again, not announced again, since kept
		Expect(h.of(notify.Unhealthy)).To(HaveLen(1))
		view, _ = e.m.Instance(context.Background(), id)
		Expect(*view.Health.Since).To(BeTemporally("==", since))

		Expect(e.sim.Resurrect(victim, e.sim.InstanceIDs(victim, "")[0])).To(Succeed())
		s = next()
		Expect(s.Health).To(And(HaveField("Unhealthy", 0), HaveField("Recovered", 1)))
		view, _ = e.m.Instance(context.Background(), id)
		Expect(view.Health.Status).To(Equal("healthy"))
		Expect(counter(e.reg, "blacksmith_instances_unhealthy", nil)).To(BeZero())
		Expect(h.of(notify.Recovered)).To(ConsistOf(HaveField("InstanceID", id)))
		Expect(h.of(notify.Unhealthy)).To(HaveLen(1))
	})

	It("does not call an instance stopped on purpose unhealthy", func() {
		e.run(reconciler.RunOptions{})
		stopped := e.names[1]
		e.changeState(stopped, "*", "stopped")
		s := next()
		Expect(s.Health.Named).To(Equal(1), "the stop's instance events name it")
		Expect(s.Health.Unhealthy).To(BeZero())
		Expect(h.of(notify.Unhealthy)).To(BeEmpty())
	})

	It("keeps the last word when the Director cannot say", func() {
		e.run(reconciler.RunOptions{})
		victim := e.names[1]
		Expect(e.sim.SetAgent(victim, e.sim.InstanceIDs(victim, "")[0], sim.AgentUnresponsive)).To(Succeed())
		Expect(next().Health.Unhealthy).To(Equal(1))
		Expect(e.sim.InjectFailure(sim.Failure{Endpoint: "/deployments/:name/vms", Method: "GET"})).To(Succeed())
		s := next()
		Expect(s.Health).To(And(HaveField("Failed", BeNumerically(">=", 1)), HaveField("Unhealthy", 1)), "not read: stays unhealthy, not recovered")
		Expect(h.of(notify.Recovered)).To(BeEmpty())
	})

	It("asks again at the next run a deployment whose check failed, though no event names it any more", func() {
		e.run(reconciler.RunOptions{})
		victim := e.names[3]
		Expect(e.sim.SetAgent(victim, e.sim.InstanceIDs(victim, "")[0], sim.AgentUnresponsive)).To(Succeed())
		Expect(e.sim.InjectFailure(sim.Failure{Endpoint: "/tasks/:id/output"})).To(Succeed()) // the checks alone read it
		s := next()
		Expect(s.Health.Failed).To(BeNumerically(">=", 1))
		Expect(s.Health.Unhealthy).To(BeZero())
		e.sim.ClearFailures()
		s = next()
		Expect(s.Health.Named).To(BeNumerically(">=", 1), "pending from the failed check")
		Expect(s.Health.Unhealthy).To(Equal(1))
	})

	It("leaves a deployment a task holds for the next run, and does not look in a dry or scoped run", func() {
		e.run(reconciler.RunOptions{})
		busy := e.names[4]
		Expect(e.sim.SetAgent(busy, e.sim.InstanceIDs(busy, "")[0], sim.AgentUnresponsive)).To(Succeed())
		e.sim.SetTaskDuration(time.Hour)
		_, err := e.bosh.Deploy(context.Background(), []byte(e.manifest(busy)))
		Expect(err).NotTo(HaveOccurred())
		e.sim.SetTaskDuration(5 * time.Millisecond) // the checks' tasks
		Eventually(func() bool {
			list, _ := e.bosh.Deployments(context.Background())
			for _, d := range list {
				if d.Name == busy {
					return d.Locked
				}
			}
			return false
		}).Should(BeTrue())
		s := next()
		Expect(s.Health.Unhealthy).To(BeZero(), "not asked while its task runs")
		Expect(e.run(reconciler.RunOptions{DryRun: true}).Health).To(BeNil())
		Expect(e.run(reconciler.RunOptions{Scope: reconciler.Scope{Instance: instanceID(busy)}}).Health).To(BeNil())
	})

	It("drops the entry of an instance whose deployment and record are gone", func() {
		e.run(reconciler.RunOptions{})
		gone := e.names[6]
		Expect(e.sim.SetAgent(gone, e.sim.InstanceIDs(gone, "")[0], sim.AgentUnresponsive)).To(Succeed())
		Expect(next().Health.Unhealthy).To(Equal(1))
		e.sim.RemoveDeployment(gone)
		Expect(next().Health.Unhealthy).To(BeZero())
		Expect(e.m.Status().Health.Unhealthy).To(BeZero())
	})
})
