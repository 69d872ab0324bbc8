package reconciler_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("the Director's event feed", func() {
	// change redeploys a seeded deployment with one more top-level key, as
	// an operator's bosh deploy would, and returns the new manifest.
	change := func(e *env, name, tag string) string {
		GinkgoHelper()
		changed := strings.TrimRight(e.manifest(name), "\n") + fmt.Sprintf("\ntags:\n  change: %q\n", tag)
		Expect(e.sim.PutDeployment(changed)).To(Succeed())
		return changed
	}

	It("starts with a resync, then costs a listing and one page of events while nothing changes, cache expired or not", func() {
		e := newEnv(envOptions{seed: 6, clock: true, config: func(c *config.ReconcilerConfig) { c.CacheTTL = time.Hour }})
		first := e.run(report.RunOptions{})
		Expect(first.Feed).To(And(HaveField("Mode", report.FeedResync), HaveField("Reason", ContainSubstring("no event read yet"))))
		Expect(first.ManifestsFetched).To(Equal(6))

		e.clock.advance(2 * time.Hour) // every cached copy is older than cache_ttl
		e.sim.ResetStats()
		s := e.run(report.RunOptions{})
		Expect(s.Feed.Mode).To(Equal(report.FeedWatch))
		Expect(s.ManifestsFetched).To(BeZero(), "the feed vouches for the expired copies")
		Expect(s.Converged).To(BeTrue(), "%v", s.Blockers)
		Expect(e.sim.Stats().Requests).To(Equal(map[string]int{"GET /deployments": 1, "GET /events": 1, "GET /tasks": 1}))
	})

	It("goes on after a restart from the mark kept in Vault: nothing fetched, the index records vouch", func() {
		e := newEnv(envOptions{seed: 5})
		e.run(report.RunOptions{})
		changed := e.names[2]
		text := change(e, changed, "before the restart")

		restarted := e.newManagerWith(nil) // an empty cache, as after a restart
		e.m = restarted
		e.sim.ResetStats()
		s := e.run(report.RunOptions{})
		Expect(s.Feed).To(And(HaveField("Mode", report.FeedWatch), HaveField("Changed", 1), HaveField("Trusted", 4)))
		Expect(s.ManifestsFetched).To(Equal(1), "only the deployment changed while the daemon was down")
		Expect(s.Drift).To(Equal(1))
		Expect(e.sim.Stats().Requests).To(HaveKeyWithValue("GET /deployments/:name", 1))
		stored, _, err := e.store.Manifest(ctx(), instanceID(changed))
		Expect(err).NotTo(HaveOccurred())
		Expect(stored).To(Equal(text))
	})

	It("falls back to a resync when the feed no longer reaches the mark (pruned events), and is correct", func() {
		e := newEnv(envOptions{seed: 8})
		e.run(report.RunOptions{})
		e.sim.Knobs().SetEventsKept(3)
		changed := map[string]string{}
		for i, name := range e.names[:5] {
			changed[name] = change(e, name, fmt.Sprint("pruned ", i))
		}
		s := e.run(report.RunOptions{})
		Expect(s.Feed).To(And(HaveField("Mode", report.FeedResync), HaveField("Reason", ContainSubstring("no longer in the Director's log"))))
		Expect(s.ManifestsFetched).To(Equal(8), "every deployment")
		Expect(s.Drift).To(Equal(5))
		for name, text := range changed {
			stored, _, err := e.store.Manifest(ctx(), instanceID(name))
			Expect(err).NotTo(HaveOccurred())
			Expect(stored).To(Equal(text), name)
		}
		Expect(e.run(report.RunOptions{}).Feed.Mode).To(Equal(report.FeedWatch), "the mark moved on")
	})

	It("keeps a named deployment it could not fetch (quarantined) pending until it is fetched", func() {
		e := newEnv(envOptions{seed: 3, config: func(c *config.ReconcilerConfig) { c.RetryAttempts = 1 }})
		e.run(report.RunOptions{})
		bad := e.names[1]
		text := change(e, bad, "while failing")
		Expect(e.sim.Faults().Inject(sim.Failure{Endpoint: "GET /deployments/:name", Deployment: bad})).To(Succeed())
		s := e.run(report.RunOptions{})
		Expect(s.NewlyQuarantined).To(ConsistOf(HaveField("Deployment", bad)))
		Expect(e.run(report.RunOptions{}).Quarantined).To(HaveLen(1), "skipped while quarantined")

		e.sim.Faults().Clear()
		next := e.run(report.RunOptions{RetryQuarantined: true})
		Expect(next.Feed).To(And(HaveField("Mode", report.FeedWatch), HaveField("Changed", 1)), "still named: pending")
		Expect(next.Drift).To(Equal(1), "the change made while it failed is found")
		stored, _, err := e.store.Manifest(ctx(), instanceID(bad))
		Expect(err).NotTo(HaveOccurred())
		Expect(stored).To(Equal(text))
		Expect(e.run(report.RunOptions{}).Feed.Changed).To(BeZero(), "no longer pending")
	})

	It("resyncs once resync_period has passed since the last full fetch", func() {
		var now atomic.Int64
		now.Store(time.Now().UnixNano())
		clock := func() time.Time { return time.Unix(0, now.Load()) }
		e := newEnv(envOptions{seed: 3})
		e.m = e.newManagerWith(func(o *reconciler.Options) { o.Now = clock })
		e.run(report.RunOptions{})
		now.Add(int64(23 * time.Hour))
		Expect(e.run(report.RunOptions{}).ManifestsFetched).To(BeZero())
		now.Add(int64(2 * time.Hour))
		s := e.run(report.RunOptions{})
		Expect(s.Feed).To(And(HaveField("Mode", report.FeedResync), HaveField("Reason", ContainSubstring("resync_period"))))
		Expect(s.ManifestsFetched).To(Equal(3))
	})

	Describe("follows the instance- and VM-level events the deployment field names", func() {
		DescribeTable("the next scheduled run fetches that deployment alone",
			func(outOfBand func(e *env, name string)) {
				e := newEnv(envOptions{seed: 5, sim: sim.Options{TaskDuration: 10 * time.Millisecond}, clock: true,
					config: func(c *config.ReconcilerConfig) { c.CacheTTL = time.Hour }})
				e.run(report.RunOptions{})
				touched := e.names[3]
				outOfBand(e, touched)
				e.clock.advance(2 * time.Hour) // every cached copy is older than cache_ttl: only the feed vouches
				e.sim.ResetStats()
				s := e.run(report.RunOptions{})
				Expect(s.Feed).To(And(HaveField("Mode", report.FeedWatch), HaveField("Changed", 1)))
				Expect(s.ManifestsFetched).To(Equal(1), "the feed vouches for the four others, their copies expired")
				Expect(e.sim.Stats().Requests).To(HaveKeyWithValue("GET /deployments/:name", 1))
				Expect(s.Drift).To(BeZero(), "an instance recreated is no change of the manifest")
			},
			Entry("an instance recreated by an operator (bosh recreate: instance and VM events)", func(e *env, name string) {
				e.changeState(name, "*", "recreate")
			}),
			Entry("a VM resurrected by the Health Monitor (scan and fix: VM events by hm only)", func(e *env, name string) {
				id := e.sim.InstanceIDs(name, "")[0]
				Expect(e.sim.SetAgent(name, id, sim.AgentUnresponsive)).To(Succeed())
				e.run(report.RunOptions{}) // past the alert event
				Expect(e.sim.Resurrect(name, id)).To(Succeed())
			}),
			Entry("an agent that stopped answering (the Health Monitor's alert event)", func(e *env, name string) {
				Expect(e.sim.SetAgent(name, e.sim.InstanceIDs(name, "")[0], sim.AgentUnresponsive)).To(Succeed())
			}),
		)
	})
})

func ctx() context.Context { return context.Background() }

// A Director at its own default records no events (director.events.record_events
// false): an empty event log used to be taken for "nothing changed", and an
// operator's deploy went unseen until resync_period.
var _ = Describe("a Director that records no events", func() {
	It("is watched through its tasks: an out-of-band deploy is seen by the next run, and the Director reported", func() {
		e := newEnv(envOptions{seed: 5, sim: sim.Options{TaskDuration: 10 * time.Millisecond, NoEvents: true}, clock: true,
			config: func(c *config.ReconcilerConfig) { c.CacheTTL = time.Hour }})
		first := e.run(report.RunOptions{})
		Expect(first.Feed.Mode).To(Equal(report.FeedResync))
		quiet := e.run(report.RunOptions{})
		Expect(quiet.Feed).To(And(HaveField("Mode", report.FeedWatch), HaveField("Tasks", 0), HaveField("NoEvents", false)),
			"no task, no event: nothing to tell yet")

		touched := e.names[2]
		changed := strings.TrimRight(e.manifest(touched), "\n") + "\ntags:\n  change: out-of-band\n"
		task, err := e.bosh.Deploy(context.Background(), []byte(changed)) // an operator's bosh deploy: a task, no event
		Expect(err).NotTo(HaveOccurred())
		_, err = e.bosh.WaitTask(context.Background(), task.ID, 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		e.clock.advance(2 * time.Hour) // every cached copy has expired: only a feed vouches
		e.sim.ResetStats()
		s := e.run(report.RunOptions{})
		Expect(s.Feed).To(And(HaveField("Mode", report.FeedWatch), HaveField("Events", 0), HaveField("Tasks", 1),
			HaveField("NoEvents", true)))
		Expect(s.ManifestsFetched).To(Equal(1), "the task names the deployment it changed; the others are vouched for")
		stored, _, err := e.store.Manifest(context.Background(), instanceID(touched))
		Expect(err).NotTo(HaveOccurred())
		Expect(stored).To(ContainSubstring("change: out-of-band"), "the change is in Vault")
		Expect(e.sim.Stats().Requests).To(HaveKeyWithValue("GET /tasks", 1))
		Expect(string(e.logs.Contents())).To(ContainSubstring("the Director records no events"))
		Expect(counter(e.reg, "blacksmith_reconciler_director_no_events", nil)).To(Equal(1.0))
	})
})
