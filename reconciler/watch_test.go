package reconciler_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// The watch between runs: every reconciler.watch_interval the leader looks
// at the feeds and asks for a run when they say something changed, so that
// an out-of-band change is in Vault within about a watch interval instead
// of an interval (an hour).
var _ = Describe("the watch between runs", func() {
	const every = 40 * time.Millisecond
	started := func(e *env) {
		ctx, cancel := context.WithCancel(context.Background())
		done := serveParts(ctx, runsAndWatch(e.m)...)
		DeferCleanup(func() { cancel(); <-done })
		Eventually(func() *report.Summary { return e.m.Status().LastRun }).ShouldNot(BeNil(), "the run at start")
		Eventually(func() bool { return e.m.Status().Running }).Should(BeFalse())
	}
	looks := func(e *env, result string) float64 {
		return counter(e.reg, "blacksmith_reconciler_watch_looks_total", map[string]string{"result": result})
	}
	deployOutOfBand := func(e *env, name string) {
		GinkgoHelper()
		changed := strings.TrimRight(e.manifest(name), "\n") + "\ntags:\n  change: out-of-band\n"
		task, err := e.bosh.Deploy(context.Background(), []byte(changed)) // an operator's bosh deploy
		Expect(err).NotTo(HaveOccurred())
		_, err = e.bosh.WaitTask(context.Background(), task.ID, 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
	}
	recorded := func(e *env, name string) func() string {
		return func() string {
			stored, _, err := e.store.Manifest(context.Background(), instanceID(name))
			Expect(err).NotTo(HaveOccurred())
			return stored
		}
	}

	DescribeTable("puts an out-of-band deploy in Vault within a few watch intervals, not at the next interval",
		func(noEvents bool, feed string) {
			e := newEnv(envOptions{seed: 4, sim: sim.Options{TaskDuration: 10 * time.Millisecond, NoEvents: noEvents},
				config: func(c *config.ReconcilerConfig) { c.Interval, c.WatchInterval = time.Hour, every }})
			started(e)
			Expect(e.m.Status().LastRun.Created).To(Equal(4))
			Eventually(func() float64 { return looks(e, "unchanged") }).Should(BeNumerically(">=", 2), "the feeds say nothing changed")
			runs := e.m.Status().LastRun.RunID

			touched := e.names[1]
			deployOutOfBand(e, touched)
			Eventually(recorded(e, touched)).WithTimeout(5 * time.Second).Should(ContainSubstring("change: out-of-band"))
			// The run that recorded it ends (on a Director without events, a run
			// the task's start asked for may end first, the deployment locked).
			Eventually(func() int { return e.m.Status().LastRun.InstancesSynced }).Should(Equal(1), "the run that recorded it ends")
			last := e.m.Status().LastRun
			Expect(last.RunID).NotTo(Equal(runs))
			Expect(last.Reason).To(ContainSubstring("watch: default: " + feed))
			Expect(last.ManifestsFetched).To(Equal(1), "the run in watch mode fetches only what the feeds name")
			Expect(looks(e, "changed")).To(BeNumerically(">=", 1))
		},
		Entry("a Director that records events", false, "event"),
		Entry("a Director at its default, recording no events: its tasks", true, "task"),
	)

	It("costs each Director at most two requests a look while nothing changes, and asks for no run", func() {
		e := newEnv(envOptions{seed: 3, config: func(c *config.ReconcilerConfig) { c.Interval, c.WatchInterval = time.Hour, every }})
		started(e)
		first := e.m.Status().LastRun.RunID
		e.sim.ResetStats()
		before := looks(e, "unchanged")
		Eventually(func() float64 { return looks(e, "unchanged") - before }).Should(BeNumerically(">=", 3))
		n := int(looks(e, "unchanged") - before)
		requests := e.sim.Stats().Requests
		after := int(looks(e, "unchanged") - before)
		// The watch goes on while the spec reads: a look may be half done when
		// the stats are reset and when they are read, so each end may count
		// one of its two requests.
		Expect(requests["GET /events"]).To(BeNumerically(">=", n-1))
		Expect(requests["GET /events"]).To(BeNumerically("<=", after+2))
		Expect(requests["GET /tasks"]).To(BeNumerically("~", requests["GET /events"], 1), "an event page and a page of tasks a look")
		Expect(requests["GET /events"]+requests["GET /tasks"]).To(BeNumerically("<=", 2*(after+2)), "at most two requests a look")
		for route, count := range requests {
			Expect(route).To(BeElementOf("GET /events", "GET /tasks"), "%s asked %d times", route, count)
		}
		Expect(e.m.Status().LastRun.RunID).To(Equal(first), "no run asked for")
	})

	It("asks for a run when a task that was running at the last run ends, and not while it runs", func() {
		e := newEnv(envOptions{seed: 3, sim: sim.Options{TaskDuration: 10 * time.Millisecond, NoEvents: true},
			config: func(c *config.ReconcilerConfig) { c.Interval, c.WatchInterval = time.Hour, every }})
		e.sim.Knobs().SetTaskDuration(time.Hour)
		long, err := e.bosh.Deploy(context.Background(), []byte(e.manifest(e.names[0])))
		Expect(err).NotTo(HaveOccurred())
		e.sim.Knobs().SetTaskDuration(10 * time.Millisecond)
		started(e) // the run at start sees the task running: its mark stops before it
		first := e.m.Status().LastRun.RunID
		before := looks(e, "unchanged")
		Eventually(func() float64 { return looks(e, "unchanged") - before }).Should(BeNumerically(">=", 3))
		Expect(e.m.Status().LastRun.RunID).To(Equal(first), "a task still running is no change yet")

		Expect(e.sim.CancelTask(long.ID)).To(Succeed())
		Eventually(func() string { return e.m.Status().LastRun.Reason }).Should(ContainSubstring(fmt.Sprintf("task %d ended", long.ID)))
	})

	It("does not look with reconciler.watch_interval 0", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.Interval, c.WatchInterval = time.Hour, 0 }})
		started(e)
		e.sim.ResetStats()
		deployOutOfBand(e, e.names[0])
		Consistently(recorded(e, e.names[0]), 10*every, every).ShouldNot(ContainSubstring("change: out-of-band"))
		Expect(e.sim.Stats().Requests).NotTo(HaveKey("GET /events"))
	})
})
