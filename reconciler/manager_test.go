package reconciler_test

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// start serves the manager's runs and watch until the spec ends; it
// returns the channel that is closed when they have returned and the
// function that stops them.
func (e *env) start() (<-chan struct{}, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	done := serveParts(ctx, runsAndWatch(e.m)...)
	go func() {
		defer GinkgoRecover()
		defer close(stopped)
		Expect(<-done).To(Succeed())
	}()
	DeferCleanup(func() {
		cancel()
		Eventually(stopped, 10*time.Second).Should(BeClosed())
	})
	return stopped, cancel
}

var _ = Describe("the manager", func() {
	slow := func(c *config.ReconcilerConfig) { c.MaxConcurrency = 1 }

	It("runs at start, and serves a force during a run with the next run, never overlapping", func() {
		e := newEnv(envOptions{seed: 6, sim: sim.Options{Latency: 40 * time.Millisecond}, config: slow})
		e.start()
		Eventually(func() *report.Summary { return e.m.Status().LastRun }, 10*time.Second).ShouldNot(BeNil())
		Expect(e.m.Status().LastRun.Created).To(Equal(6))

		id1, ch1, err := e.m.Trigger(report.RunOptions{Force: true, Reason: "first"})
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() string { return e.m.Status().RunID }).Should(Equal(id1))
		id2, ch2, err := e.m.Trigger(report.RunOptions{Force: true, Reason: "second"})
		Expect(err).NotTo(HaveOccurred())
		id3, ch3, err := e.m.Trigger(report.RunOptions{Reason: "third"})
		Expect(err).NotTo(HaveOccurred())
		Expect(id2).NotTo(Equal(id1))
		Expect(id3).To(Equal(id2), "requests made during a run are merged into the next one")

		var s1, s2, s3 report.Summary
		Eventually(ch1, 10*time.Second).Should(Receive(&s1))
		Eventually(ch2, 10*time.Second).Should(Receive(&s2))
		Eventually(ch3).Should(Receive(&s3))
		Expect(s1.RunID).To(Equal(id1))
		Expect(s2.RunID).To(Equal(id2))
		Expect(s3).To(Equal(s2))
		Expect(s2.StartedAt).To(BeTemporally(">=", s1.StartedAt.Add(s1.Duration)), "the second run starts after the first ends")
		Expect(s1.ManifestsFetched).To(Equal(6), "a forced run clears the cache")
		Expect(s2.ManifestsFetched).To(Equal(6))
		Expect(s2.Forced).To(BeTrue())
		Expect(s2.Reason).To(Equal("second; third"))
		Expect(e.sim.Stats().Requests).To(HaveKeyWithValue("GET /deployments", 3))
		Eventually(ch2).Should(BeClosed())
	})

	It("runs again every interval", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.Interval = 300 * time.Millisecond }})
		began := time.Now()
		e.start()
		Eventually(func() int64 { return e.m.Status().Metrics.TotalRuns }, 10*time.Second).Should(BeNumerically(">=", 3))
		Expect(time.Since(began)).To(BeNumerically(">=", 600*time.Millisecond), "runs at start, then an interval apart")
		Expect(e.sim.Stats().Requests["GET /deployments"]).To(BeNumerically(">=", 3))
		Expect(e.m.Status().LastRun.Reason).To(Equal("interval"))
	})

	It("makes RunOnce wait for the run in progress", func() {
		e := newEnv(envOptions{seed: 4, sim: sim.Options{Latency: 40 * time.Millisecond}, config: slow})
		e.start()
		Eventually(func() bool { return e.m.Status().Running }).Should(BeTrue())
		running := e.m.Status().RunID
		s := e.run(report.RunOptions{DryRun: true})
		last := e.m.Status().LastRun
		Expect(last.RunID).To(Equal(running))
		Expect(s.StartedAt).To(BeTemporally(">=", last.StartedAt.Add(last.Duration)))
		Expect(s.Plan.Creates).To(BeEmpty(), "the run at start created everything before the dry run began")
	})

	It("on stop, waits for the run in progress up to the bound, then cancels it, leaving nothing half-written", func() {
		e := newEnv(envOptions{seed: 20, sim: sim.Options{Latency: 50 * time.Millisecond}, config: func(c *config.ReconcilerConfig) {
			c.MaxConcurrency, c.StopTimeout = 1, 200*time.Millisecond
		}})
		stopped, stop := e.start()
		Eventually(func() int { return e.m.Status().Progress.Done }, 5*time.Second).Should(BeNumerically(">=", 2))
		Expect(e.m.Status()).To(SatisfyAll(HaveField("Running", true), HaveField("Phase", report.PhaseUpdating),
			HaveField("Progress.Total", 20)))
		began := time.Now()
		stop()
		Eventually(stopped, 5*time.Second).Should(BeClosed())
		Expect(time.Since(began)).To(BeNumerically(">=", 200*time.Millisecond))
		Expect(time.Since(began)).To(BeNumerically("<", 3*time.Second))

		st := e.m.Status()
		Expect(st.Running).To(BeFalse())
		Expect(st.LastRun.Errors).To(ConsistOf(ContainSubstring("cancelled")))
		Expect(st.LastRun.Matched).To(BeNumerically("<", 20))
		idx := e.index()
		Expect(idx).NotTo(BeEmpty())
		for _, name := range e.names {
			_, hasManifest, err := e.store.Manifest(context.Background(), instanceID(name))
			Expect(err).NotTo(HaveOccurred())
			if hasManifest {
				Expect(idx).To(HaveKey(instanceID(name)), "an instance whose records were written has its index entry")
			}
		}
		_, _, err := e.m.Trigger(report.RunOptions{})
		Expect(err).To(MatchError(reconciler.ErrNotRunning))
	})

	It("on stop, lets a run that ends within the bound finish", func() {
		e := newEnv(envOptions{seed: 5, sim: sim.Options{Latency: 30 * time.Millisecond}, config: slow})
		stopped, stop := e.start()
		Eventually(func() bool { return e.m.Status().Running }).Should(BeTrue())
		stop()
		Eventually(stopped, 5*time.Second).Should(BeClosed())
		last := e.m.Status().LastRun
		Expect(last.Errors).To(BeEmpty())
		Expect(last.Created).To(Equal(5))
	})

	It("does nothing when disabled", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.Enabled = false }})
		_, _, err := e.m.Trigger(report.RunOptions{Force: true})
		Expect(err).To(MatchError(reconciler.ErrDisabled))
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		Expect(<-serveParts(ctx, e.m.Loops().All()...)).To(Succeed())
		Expect(e.sim.Stats().Requests).To(BeEmpty())
		Expect(e.m.Status().Enabled).To(BeFalse())
		Expect(e.m.Status().LastRun).To(BeNil())
	})

	It("refuses a max_concurrency it cannot work with, and takes any batch_size", func() {
		e := newEnv(envOptions{seed: 2, config: func(c *config.ReconcilerConfig) { c.BatchSize = 1 << 40 }})
		Expect(e.run(report.RunOptions{}).Created).To(Equal(2))

		e.cfg.MaxConcurrency = 100000
		_, err := reconciler.New(reconciler.Options{Config: e.cfg, Directors: []ports.NamedDirector{{Director: e.bosh}}, Store: e.store})
		Expect(err).To(MatchError(reconciler.ErrBadOptions))
		Expect(err).To(MatchError(ContainSubstring("reconciler.max_concurrency 100000 is more than 1000")))
	})

	It("refuses a trigger when not started", func() {
		e := newEnv(envOptions{})
		_, _, err := e.m.Trigger(report.RunOptions{})
		Expect(err).To(MatchError(reconciler.ErrNotRunning))
	})

	It("reports status and metrics in the shapes operators know", func() {
		e := newEnv(envOptions{seed: 3})
		e.sim.PutDeployment("name: cf\nreleases: [{name: capi, version: '1'}]\n") // not the broker's: listed apart
		lost := "nosuch-plan-0b6f1c3e-3c5e-4e0a-9a4f-1d2c3b4a5e6f"                // looks like the broker's, a plan unknown
		e.sim.PutDeployment("name: " + lost + "\nreleases: [{name: capi, version: '1'}]\n")
		Expect(counter(e.reg, "blacksmith_reconciler_runs_total", map[string]string{"result": "success"})).To(BeZero())
		e.run(report.RunOptions{})
		e.run(report.RunOptions{})

		mfs, err := e.reg.Gather()
		Expect(err).NotTo(HaveOccurred())
		problems, err := promlint.NewWithMetricFamilies(mfs).Lint()
		Expect(err).NotTo(HaveOccurred())
		Expect(problems).To(BeEmpty())
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					Expect(l.GetName()).To(BeElementOf("result", "state", "kind", "outcome", "director"), mf.GetName())
				}
			}
		}
		Expect(counter(e.reg, "blacksmith_reconciler_runs_total", map[string]string{"result": "success"})).To(Equal(2.0))
		Expect(mfs).To(ContainElement(SatisfyAll(
			HaveField("GetName()", "blacksmith_reconciler_run_duration_seconds"),
			HaveField("GetMetric()", ConsistOf(HaveField("GetHistogram().GetSampleCount()", BeEquivalentTo(2)))))))
		Expect(counter(e.reg, "blacksmith_reconciler_deployments", nil)).To(Equal(5.0))
		Expect(counter(e.reg, "blacksmith_reconciler_unmatched_deployments", nil)).To(Equal(2.0))
		Expect(counter(e.reg, "blacksmith_reconciler_director_up", map[string]string{"director": "default"})).To(Equal(1.0),
			"one Director has its series too")
		Expect(counter(e.reg, "blacksmith_reconciler_director_deployments", map[string]string{"director": "default"})).To(Equal(5.0))
		Expect(counter(e.reg, "blacksmith_reconciler_instances", map[string]string{"state": "matched"})).To(Equal(3.0))
		Expect(counter(e.reg, "blacksmith_reconciler_vault_writes_total", map[string]string{"kind": "manifest"})).To(Equal(3.0))
		Expect(counter(e.reg, "blacksmith_reconciler_converged", nil)).To(BeZero(), "the unmatched deployment of the broker's kind is unexplained; cf is not")
		Expect(e.m.Status().Blockers).To(ConsistOf("1 deployments unmatched"))
		Expect(counter(e.reg, "blacksmith_reconciler_last_success_timestamp_seconds", nil)).To(BeNumerically("~", float64(time.Now().Unix()), 60))

		st := e.m.Status()
		Expect(st.Metrics.TotalRuns).To(Equal(int64(2)))
		Expect(st.Metrics.SuccessfulRuns).To(Equal(int64(2)))
		Expect(st.Metrics.FailedRuns).To(BeZero())
		Expect(st.Metrics.TotalDeploymentsScanned).To(Equal(int64(10)))
		Expect(st.Metrics.TotalInstancesFound).To(Equal(int64(6)))
		Expect(st.Metrics.TotalInstancesSynced).To(Equal(int64(3)))
		Expect(st.Metrics.AverageDurationSeconds).To(BeNumerically(">", 0))
		Expect(st.Unmatched).To(ConsistOf(And(HaveField("Deployment", "cf"), HaveField("Foreign", true), HaveField("Reason", ContainSubstring("no properties.blacksmith"))),
			And(HaveField("Deployment", lost), HaveField("Foreign", false))))
		Expect(st.LastRun).To(And(HaveField("Unmatched", 2), HaveField("Foreign", 1)))

		b, err := json.Marshal(st)
		Expect(err).NotTo(HaveOccurred())
		var doc map[string]any
		Expect(json.Unmarshal(b, &doc)).To(Succeed())
		Expect(doc).To(HaveKey("running"))
		Expect(doc).To(HaveKeyWithValue("phase", "idle"))
		Expect(doc).To(HaveKeyWithValue("converged", false))
		Expect(doc).To(HaveKeyWithValue("blockers", ConsistOf("1 deployments unmatched")))
		Expect(doc).To(HaveKeyWithValue("quarantined", BeEmpty()))
		Expect(doc["last_run"]).To(HaveKeyWithValue("result", "success"))
		Expect(doc["last_run"]).To(HaveKeyWithValue("matched_by", HaveKeyWithValue("name", 3.0)))
		Expect(doc["last_run"]).To(HaveKey("duration_seconds"))
		Expect(doc["metrics"]).To(HaveKey("average_duration_seconds"))
		Expect(doc["orphans"]).To(BeEmpty())
	})
})
