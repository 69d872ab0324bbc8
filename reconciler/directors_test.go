package reconciler_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The reconciler over several Directors: each run lists them all, each
// deployment is reconciled with its own Director and its record names it,
// and a Director that cannot be listed orphans none of its instances.
var _ = Describe("several Directors", func() {
	const perDirector = 1000
	var (
		e         *env
		west      *sim.Director
		westNames []string
		hooks     *receiver
	)

	BeforeEach(func() {
		e = newEnv(envOptions{seed: perDirector, config: func(c *config.ReconcilerConfig) { c.MaxConcurrency = 10; c.BatchSize = 100 }})
		var err error
		west, err = sim.New(sim.Options{})
		Expect(err).NotTo(HaveOccurred())
		DeferCleanup(func() { Expect(west.Close()).To(Succeed()) })
		westNames = sortedNames(west.SeedDeployments(perDirector, nil))
		westClient, err := bosh.New(bosh.Options{Name: "west", Address: west.URL(), Username: sim.DefaultUsername, Password: sim.DefaultPassword})
		Expect(err).NotTo(HaveOccurred())
		hooks = &receiver{}
		srv := httptest.NewServer(hooks)
		DeferCleanup(srv.Close)
		n, err := notify.New(notify.Options{Webhooks: []notify.Webhook{{URL: srv.URL, Secret: "hook-secret"}}})
		Expect(err).NotTo(HaveOccurred())
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { n.Run(ctx); close(done) }()
		DeferCleanup(func() { cancel(); <-done })
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			o.Notifier = n
			o.Directors = []ports.NamedDirector{{Name: "east", Director: e.bosh, Tasks: e.bosh},
				{Name: "west", Director: westClient, Tasks: westClient, Deployer: westClient}}
			o.Registerer = e.reg
		})
	})

	westManifest := func(name string) string {
		GinkgoHelper()
		c, err := bosh.New(bosh.Options{Address: west.URL(), Username: sim.DefaultUsername, Password: sim.DefaultPassword})
		Expect(err).NotTo(HaveOccurred())
		text, err := c.Manifest(context.Background(), name)
		Expect(err).NotTo(HaveOccurred())
		return text
	}

	directorsOf := func() map[string]int {
		out := map[string]int{}
		for _, rec := range e.index() {
			out[rec.Director]++
		}
		return out
	}

	It("matches every deployment of both, names each record's Director, then watches both feeds", func() {
		s := e.run(report.RunOptions{Reason: "first"})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.DeploymentsSeen).To(Equal(2 * perDirector))
		Expect(s.Matched).To(Equal(2 * perDirector))
		Expect(s.Result).To(Equal("success"))
		Expect(s.Directors).To(HaveLen(2))
		Expect(s.Directors[0]).To(Equal(report.DirectorReport{Name: "east", Listed: true, Deployments: perDirector,
			Feed: s.Directors[0].Feed}))
		Expect(s.Directors[0].Feed.Mode).To(Equal(report.FeedResync), "first run")
		Expect(s.Directors[1].Name).To(Equal("west"))
		Expect(s.Directors[1].Listed).To(BeTrue())
		Expect(s.Directors[1].Deployments).To(Equal(perDirector))
		Expect(directorsOf()).To(Equal(map[string]int{"east": perDirector, "west": perDirector}))
		Expect(e.index()[instanceID(westNames[0])].Director).To(Equal("west"))

		// A scheduled run later: each Director's feed from its own mark, nothing fetched or written.
		e.sim.ResetStats()
		west.ResetStats()
		s = e.run(report.RunOptions{Reason: "scheduled"})
		Expect(s.Feed.Mode).To(Equal(report.FeedWatch), s.Feed.Reason)
		Expect(s.ManifestsFetched).To(Equal(0))
		Expect(s.Writes).To(Equal(0))
		Expect(s.Converged).To(BeTrue(), "%v", s.Blockers)
		for _, d := range []*sim.Director{e.sim, west} {
			Expect(d.Stats().Requests["GET /deployments"]).To(Equal(1), "one listing of each Director per run")
			Expect(d.Stats().Requests["GET /deployments/:name"]).To(Equal(0))
		}

		// A change on the second Director behind the broker's back is found through its own feed.
		changed := westNames[7]
		before := westManifest(changed)
		after := strings.Replace(before, "\nname: ", "\ntags: {changed: \"yes\"}\nname: ", 1)
		Expect(after).NotTo(Equal(before))
		Expect(west.PutDeployment(after)).To(Succeed())
		s = e.run(report.RunOptions{Reason: "scheduled"})
		Expect(s.Directors[1].Feed.Changed).To(Equal(1))
		Expect(s.Directors[0].Feed.Changed).To(Equal(0))
		Expect(s.ManifestsFetched).To(Equal(1))
		stored, ok, err := e.store.Manifest(context.Background(), instanceID(changed))
		Expect(err).NotTo(HaveOccurred())
		Expect(ok).To(BeTrue())
		Expect(stored).To(Equal(after), "the change is in Vault")
		Eventually(func() []notify.Event {
			hooks.mu.Lock()
			defer hooks.mu.Unlock()
			return slices.Clone(hooks.events)
		}).Should(ContainElement(And(HaveField("Type", "drift"), HaveField("Deployment", changed), HaveField("Director", "west"))),
			"a notification names the deployment's own Director")
	})

	It("flags no orphan for the instances of a Director that cannot be listed, and goes on with the others", func() {
		Expect(e.run(report.RunOptions{}).Matched).To(Equal(2 * perDirector))
		// One deployment of the second Director keeps failing: it is quarantined.
		sick := westNames[1]
		Expect(west.Faults().Inject(sim.Failure{Endpoint: "/deployments/:name", Deployment: sick, Status: 500})).To(Succeed())
		s := e.run(report.RunOptions{Force: true})
		Expect(s.NewlyQuarantined).To(ContainElement(HaveField("Deployment", sick)))
		west.Faults().Clear()

		Expect(west.Faults().Inject(sim.Failure{Endpoint: "GET /deployments", Status: 500})).To(Succeed())
		gone := e.names[3]
		e.sim.RemoveDeployment(gone)

		s = e.run(report.RunOptions{Force: true})
		Expect(s.Result).To(Equal("failure"), "a Director that cannot be listed is an error of the run")
		Expect(s.Released).To(BeEmpty(), "a quarantined deployment of the Director that is down is not released as gone")
		Expect(e.m.Status().Quarantined).To(ContainElement(HaveField("Deployment", sick)))
		Expect(s.Errors).To(ContainElement(ContainSubstring("Director west could not be listed")))
		Expect(s.Unknown).To(Equal(perDirector))
		Expect(s.Orphaned).To(Equal(1), "the first Director's missing deployment is still found")
		Expect(s.Matched).To(Equal(perDirector - 1))
		Expect(s.Directors[1].Listed).To(BeFalse())
		Expect(s.Directors[1].Error).To(ContainSubstring("500"))
		for id, rec := range e.index() {
			if rec.Director == "west" {
				Expect(rec.Orphaned).To(BeFalse(), id)
			}
		}
		Expect(e.index()[instanceID(gone)].Orphaned).To(BeTrue())
		Expect(counter(e.reg, "blacksmith_reconciler_director_up", map[string]string{"director": "west"})).To(Equal(0.0))
		Expect(counter(e.reg, "blacksmith_reconciler_director_up", map[string]string{"director": "east"})).To(Equal(1.0))

		_, err := e.m.RebuildIndex(context.Background(), true)
		Expect(err).To(MatchError(ContainSubstring("Director west could not be listed")), "rebuild-index needs every Director")
		for id, rec := range e.index() {
			if rec.Director == "west" {
				Expect(rec.Orphaned).To(BeFalse(), id)
			}
		}

		// A record naming a Director that is not configured (removed from bosh) is unknown too.
		some := instanceID(e.names[5])
		e.sim.RemoveDeployment(e.names[5])
		_, err = e.store.Update(context.Background(), map[string]vault.Change{some: func(cur *vault.Record) (*vault.Record, error) {
			cur.Director = "north"
			return cur, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		west.Faults().Clear()
		s = e.run(report.RunOptions{Force: true, RetryQuarantined: true})
		Expect(s.Errors).To(BeEmpty())
		Expect(s.Unknown).To(Equal(1))
		Expect(e.index()[some].Orphaned).To(BeFalse())
		Expect(s.Matched).To(Equal(2*perDirector - 2))
		Expect(s.Released).To(ContainElement(HaveField("Deployment", sick)), "back with its Director, it is tried and released")
	})

	It("takes a Director whose requests keep failing mid-run out of the run, and goes on with the others", func() {
		e.m = e.newManagerWith(func(o *reconciler.Options) {
			o.Config.BreakerThreshold = 5
			westClient, err := bosh.New(bosh.Options{Name: "west", Address: west.URL(), Username: sim.DefaultUsername, Password: sim.DefaultPassword})
			Expect(err).NotTo(HaveOccurred())
			o.Directors = []ports.NamedDirector{{Name: "east", Director: e.bosh, Tasks: e.bosh}, {Name: "west", Director: westClient, Tasks: westClient, Deployer: westClient}}
		})
		Expect(west.Faults().Inject(sim.Failure{Endpoint: "/deployments/:name", Status: 503})).To(Succeed())
		s := e.run(report.RunOptions{})
		Expect(s.Errors).To(ContainElement(ContainSubstring("Director west failed during the run")), "%v", s.Errors)
		Expect(s.Result).To(Equal("failure"))
		Expect(s.Matched).To(Equal(perDirector), "every deployment of the first Director is reconciled")
		Expect(s.NewlyQuarantined).To(BeEmpty(), "the failures of the Director that failed are not its deployments'")
		Expect(s.Directors[1].Listed).To(BeFalse())
		Expect(directorsOf()).To(Equal(map[string]int{"east": perDirector}))

		west.Faults().Clear()
		s = e.run(report.RunOptions{})
		Expect(s.Matched).To(Equal(2*perDirector), "the next run takes it up again")
		Expect(s.Errors).To(BeEmpty())
	})
})

var _ = Describe("one Director, with records that name another", func() {
	It("counts them unknown, never orphaned nor remediated (a Director removed from bosh or renamed)", func() {
		e := newEnv(envOptions{seed: 3, config: func(c *config.ReconcilerConfig) {
			c.Remediation.Mode, c.Remediation.MinAge = config.RemediatePurge, time.Nanosecond
		}})
		e.run(report.RunOptions{})
		id := instanceID(e.names[0])
		_, err := e.store.Update(context.Background(), map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
			cur.Director = "west"
			cur.Orphaned, cur.OrphanedAt = true, time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
			return cur, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		e.sim.RemoveDeployment(e.names[0])
		gone := e.names[1]
		e.sim.RemoveDeployment(gone)

		s := e.run(report.RunOptions{})
		Expect(s.Orphaned).To(Equal(1), "the record of this Director's removed deployment is flagged")
		Expect(e.index()[instanceID(gone)].Orphaned).To(BeTrue())
		Expect(s.Remediated).To(BeEmpty(), "the other Director's record is not purged")
		Expect(e.index()).To(HaveKey(id))
		s = e.run(report.RunOptions{})
		Expect(s.Remediated).To(ContainElement(HaveField("InstanceID", instanceID(gone))), "this Director's orphan is remediated as configured")
		Expect(e.index()).To(HaveKey(id), "the record of a Director not configured stays")
	})
})
