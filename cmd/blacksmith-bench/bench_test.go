package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
	"github.com/blacksmith-reconciler/blacksmith/internal/vaultserver"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("judging a run", func() {
	cold := func(wall float64, errs int) result {
		return result{Deployments: 1000, WallS: wall, Matched: 1000, Errors: errs,
			DirectorRequests: map[string]int{"GET /deployments": 1, "GET /deployments/:name": 1000, "GET /deployments/:name/vms": 1000}}
	}
	warm := func(wall float64, requests map[string]int, writes uint64) result {
		return result{Deployments: 1000, WallS: wall, Matched: 1000, Converged: true, DirectorRequests: requests, VaultWrites: writes}
	}
	listing := map[string]int{"GET /deployments": 1, "GET /events": 1, "GET /tasks": 1}
	// steady is a steady run of 1,000 deployments that made requests and
	// tasks and handed handed deployments to the health loop, in wall seconds.
	steady := func(wall float64, requests map[string]int, tasks, handed int) result {
		r := warm(wall, requests, 1)
		r.DirectorTasks, r.HealthHanded = tasks, handed
		return r
	}
	swept := map[string]int{"GET /deployments": 1, "GET /events": 1, "GET /tasks": 1, "GET /deployments/:name/vms": 42,
		"GET /tasks/:id": 84, "GET /tasks/:id/output": 42}

	DescribeTable("sets the lower bound and the ratio, and says whether the target was met",
		func(r result, scenario string, bound, ratio float64, met bool) {
			r.judge(scenario, 10*time.Millisecond, 5)
			Expect(r.LowerBoundS).To(BeNumerically("~", bound, 1e-9))
			Expect(r.Ratio).To(BeNumerically("~", ratio, 1e-9))
			Expect(r.TargetMet).To(Equal(met))
		},
		Entry("cold within 1.2 x N x L / max_concurrency", cold(2.3, 0), "cold", 2.0, 1.15, true),
		Entry("cold too slow", cold(2.5, 0), "cold", 2.0, 1.25, false),
		Entry("cold with an error", cold(2.1, 1), "cold", 2.0, 1.05, false),
		Entry("warm: one listing, nothing written but the run log", warm(0.5, listing, 1), "warm", 0.01, 50.0, true),
		Entry("warm with a manifest fetched", warm(0.5, map[string]int{"GET /deployments": 1, "GET /events": 1, "GET /tasks": 1, "GET /deployments/:name": 1}, 1), "warm", 0.01, 50.0, false),
		Entry("warm without the task feed", warm(0.5, map[string]int{"GET /deployments": 1, "GET /events": 1, "GET /deployments/:name": 1}, 1), "warm", 0.01, 50.0, false),
		Entry("warm without the event feed", warm(0.5, map[string]int{"GET /deployments": 1, "GET /deployments/:name": 1}, 1), "warm", 0.01, 50.0, false),
		Entry("warm with a Vault write besides the run log", warm(0.5, listing, 2), "warm", 0.01, 50.0, false),
		Entry("warm over 2 s", warm(2.5, listing, 1), "warm", 0.01, 250.0, false),
		Entry("steady: three requests, no task, every deployment handed to the health loop", steady(0.4, listing, 0, 1000), "steady", 0.01, 40.0, true),
		Entry("steady sweeping within the run (as before #41)", steady(0.4, swept, 42, 1000), "steady", 0.01, 40.0, false),
		Entry("steady with a task", steady(0.4, listing, 1, 1000), "steady", 0.01, 40.0, false),
		Entry("steady handing the health loop nothing", steady(0.4, listing, 0, 0), "steady", 0.01, 40.0, false),
		Entry("steady over 2 s", steady(2.1, listing, 0, 1000), "steady", 0.01, 210.0, false),
	)

	// upgraded is a fleet upgrade of 1,000 instances (injected of them made
	// to fail and rolled back), 200 ms tasks, 10 at once, in wall seconds.
	upgraded := func(wall float64, injected int, change func(*upgradeFigures)) result {
		u := &upgradeFigures{Instances: 1000, TaskDurationMS: 200, MaxInFlight: 10, Canaries: 1, Injected: injected,
			MaxOverlap: 10, CanaryFirst: true, RolledBack: injected,
			Counts: map[string]int{report.UpgradeUpgraded: 1000 - injected, report.UpgradeRolledBack: injected}}
		if change != nil {
			change(u)
		}
		return result{Deployments: 1000, WallS: wall, DirectorTasks: 1000 + injected, upgradeFigures: u}
	}
	DescribeTable("judges a fleet upgrade against N x task / max_in_flight and its checks",
		func(r result, scenario string, bound, ratio float64, met bool) {
			r.judge(scenario, 10*time.Millisecond, 5)
			Expect(r.LowerBoundS).To(BeNumerically("~", bound, 1e-9))
			Expect(r.Ratio).To(BeNumerically("~", ratio, 1e-9))
			Expect(r.TargetMet).To(Equal(met))
		},
		Entry("every instance upgraded within 1.2 x the bound", upgraded(22, 0, nil), "upgrade", 20.0, 1.1, true),
		Entry("too slow", upgraded(25, 0, nil), "upgrade", 20.0, 1.25, false),
		Entry("more tasks at once than max_in_flight", upgraded(22, 0, func(u *upgradeFigures) { u.MaxOverlap = 11 }), "upgrade", 20.0, 1.1, false),
		Entry("the canary not first", upgraded(22, 0, func(u *upgradeFigures) { u.CanaryFirst = false }), "upgrade", 20.0, 1.1, false),
		Entry("an instance half-upgraded", upgraded(22, 0, func(u *upgradeFigures) { u.HalfState = 1 }), "upgrade", 20.0, 1.1, false),
		Entry("the failed ones rolled back; their rollbacks count in the bound", upgraded(22, 30, nil), "upgrade-faults", 20.6, 22/20.6, true),
		Entry("a rollback failed", upgraded(22, 30, func(u *upgradeFigures) {
			u.RolledBack, u.RollbackFailed = 29, 1
			u.Counts[report.UpgradeRolledBack], u.Counts[report.UpgradeRollbackFailed] = 29, 1
		}), "upgrade-faults", 20.6, 22/20.6, false),
		Entry("one left in progress", upgraded(22, 30, func(u *upgradeFigures) { u.InProgress, u.HalfState = 1, 1 }), "upgrade-faults", 20.6, 22/20.6, false),
	)
})

var _ = Describe("judging the platform scenario", func() {
	// figures of 10,000 instances: the medians without and with, the CC
	// requests as the summary and the simulator count them.
	figures := func(without, with float64, requests, counted int, problems int) result {
		return result{Deployments: 10000, platformFigures: &platformFigures{RunsEach: 2, WithoutS: []float64{without, without},
			WithS: []float64{with, with}, WithoutMedianS: without, WithMedianS: with, AddedS: with - without,
			CCRequests: requests, CCRequestsCounted: counted, CCRequestBound: 5, ProblemCount: problems}}
	}
	DescribeTable("holds the difference of the medians, the requests and the checks against the goals",
		func(r result, met bool) {
			r.judge("platform", 10*time.Millisecond, 5)
			Expect(r.LowerBoundS).To(Equal(r.WithoutMedianS), "the ratio is with against without")
			Expect(r.TargetMet).To(Equal(met))
		},
		Entry("a little more, three requests", figures(0.9, 1.1, 3, 3, 0), true),
		Entry("more than half a second more", figures(0.9, 1.5, 3, 3, 0), false),
		Entry("more requests than 3 + ceil(n/5000)", figures(0.9, 1.1, 6, 6, 0), false),
		Entry("the summary and the simulator disagree", figures(0.9, 1.1, 3, 4, 0), false),
		Entry("a run not steady, or an instance not in step", figures(0.9, 1.1, 3, 3, 1), false),
	)
	It("misses the target without figures", func() {
		r := result{}
		r.judge("platform", 10*time.Millisecond, 5)
		Expect(r.TargetMet).To(BeFalse())
	})
})

var _ = Describe("the bench", func() {
	BeforeEach(func() {
		if _, err := vaultserver.Binary(); errors.Is(err, vaultserver.ErrNoBinary) && !testvault.InCI() {
			Skip("no Vault binary (run `make vault`): " + err.Error())
		}
	})

	It("prints a BENCH line per scenario with the figures asked for", func() {
		var stdout, stderr bytes.Buffer
		code := run([]string{"-n", "40", "-latency", "2ms", "-scenarios", "cold,warm,steady,platform,steady-1pct,gap,upgrade,upgrade-faults"}, &stdout, &stderr)
		Expect(code).To(BeZero(), stderr.String())

		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		Expect(lines).To(HaveLen(8))
		var got []map[string]any
		for _, l := range lines {
			Expect(l).To(HavePrefix("BENCH {"))
			var doc map[string]any
			Expect(json.Unmarshal([]byte(strings.TrimPrefix(l, "BENCH ")), &doc)).To(Succeed())
			for _, k := range []string{"scenario", "deployments", "latency_ms", "max_concurrency", "wall_s", "director_requests",
				"director_tasks", "vault_reads", "vault_writes", "peak_rss_bytes", "lower_bound_s", "ratio"} {
				Expect(doc).To(HaveKey(k))
			}
			got = append(got, doc)
		}
		coldRun, warmRun, steady, plat, onePct, gap := got[0], got[1], got[2], got[3], got[4], got[5]
		Expect(coldRun).To(SatisfyAll(HaveKeyWithValue("scenario", "cold-40"), HaveKeyWithValue("deployments", 40.0),
			HaveKeyWithValue("latency_ms", 2.0), HaveKeyWithValue("max_concurrency", 5.0), HaveKeyWithValue("matched", 40.0),
			HaveKeyWithValue("created", 40.0), HaveKeyWithValue("director_tasks", 0.0)))
		Expect(coldRun["lower_bound_s"]).To(BeNumerically("~", 40*0.002/5, 1e-9))
		Expect(coldRun["director_requests"]).To(HaveKeyWithValue("GET /deployments/:name", 40.0))
		Expect(coldRun["vault_writes"]).To(BeNumerically(">=", 80), "a manifest and metadata per instance, and the index")
		Expect(coldRun["peak_rss_bytes"]).To(BeNumerically(">", 0))

		Expect(warmRun).To(SatisfyAll(HaveKeyWithValue("scenario", "warm-40"), HaveKeyWithValue("director_tasks", 0.0),
			HaveKeyWithValue("vault_writes", 1.0), HaveKeyWithValue("converged", true), HaveKeyWithValue("counts_met", true)))
		Expect(warmRun["director_requests"]).To(Equal(map[string]any{"GET /deployments": 1.0, "GET /events": 1.0, "GET /tasks": 1.0}))
		Expect(warmRun).To(HaveKeyWithValue("vault_metadata_checks", 0.0), "the cold run read an empty index: nothing to keep")

		Expect(steady).To(SatisfyAll(HaveKeyWithValue("scenario", "steady-40"), HaveKeyWithValue("feed_mode", "watch"),
			HaveKeyWithValue("manifests_fetched", 0.0), HaveKeyWithValue("counts_met", true)), steady)
		Expect(steady["vault_metadata_checks"]).To(BeNumerically(">", 0), "the shards warm read, told unchanged")
		Expect(plat).To(SatisfyAll(HaveKeyWithValue("scenario", "platform-40"), HaveKeyWithValue("platform_counts", HaveKeyWithValue("in_step", 40.0)),
			HaveKeyWithValue("platform_problem_count", 0.0)), plat)
		Expect(onePct).To(SatisfyAll(HaveKeyWithValue("scenario", "steady-1pct-40"), HaveKeyWithValue("changed", 1.0),
			HaveKeyWithValue("drift", 1.0), HaveKeyWithValue("instances_synced", 1.0), HaveKeyWithValue("target_met", true)), onePct)
		Expect(gap).To(SatisfyAll(HaveKeyWithValue("scenario", "gap-40"), HaveKeyWithValue("feed_mode", "resync"),
			HaveKeyWithValue("changed", 20.0), HaveKeyWithValue("drift", 20.0), HaveKeyWithValue("manifests_fetched", 40.0),
			HaveKeyWithValue("target_met", true)), gap)

		// The fleet upgrades (their wall, against 40 x 200 ms / 10, is not judged here).
		up, faults := got[6], got[7]
		Expect(up).To(SatisfyAll(HaveKeyWithValue("scenario", "upgrade-40"), HaveKeyWithValue("instances", 40.0),
			HaveKeyWithValue("director_tasks", 40.0), HaveKeyWithValue("counts", map[string]any{"upgraded": 40.0}),
			HaveKeyWithValue("canary_first", true), HaveKeyWithValue("half_state", 0.0), HaveKeyWithValue("problem_count", 0.0)), up)
		Expect(up["max_overlap"]).To(BeNumerically("<=", 10))
		Expect(up["lower_bound_s"]).To(BeNumerically("~", 40*0.2/10, 1e-9))
		Expect(faults).To(SatisfyAll(HaveKeyWithValue("scenario", "upgrade-faults-40"), HaveKeyWithValue("injected_failures", 1.0),
			HaveKeyWithValue("director_tasks", 41.0), HaveKeyWithValue("counts", map[string]any{"upgraded": 39.0, "rolled_back": 1.0}),
			HaveKeyWithValue("rolled_back", 1.0), HaveKeyWithValue("rollback_failed", 0.0), HaveKeyWithValue("half_state", 0.0),
			HaveKeyWithValue("problem_count", 0.0)), faults)
	})

	It("measures the daemon's footprint on the Director: the health loop's tasks, a broker deploy's queue wait, the watch", func() {
		var stdout, stderr bytes.Buffer
		code := run([]string{"-n", "40", "-latency", "2ms", "-scenarios", "footprint", "-footprint-window", "10s"}, &stdout, &stderr)
		Expect(code).To(BeZero(), stderr.String())
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		Expect(lines).To(HaveLen(1), "cold runs first (it needs its records) and is not printed")
		var doc map[string]any
		Expect(json.Unmarshal([]byte(strings.TrimPrefix(lines[0], "BENCH ")), &doc)).To(Succeed())
		Expect(doc).To(SatisfyAll(HaveKeyWithValue("scenario", "footprint-40"), HaveKeyWithValue("window_s", 10.0),
			HaveKeyWithValue("clock_speed", 6.0), HaveKeyWithValue("broker_deploys", BeNumerically(">=", 2)),
			HaveKeyWithValue("most_sweep_tasks_at_once", ConsistOf(BeNumerically("<=", 1))),
			HaveKeyWithValue("sweep_tasks_per_hour", HaveLen(1)), HaveKeyWithValue("queue_wait_p99_ms", BeNumerically("<", 1000)),
			HaveKeyWithValue("out_of_band_recorded_s", -1.0)), "the watch looks every minute: not within 10 s")
	})

	It("measures what the platform cross-check adds to a steady run, every instance in step", func() {
		var stdout, stderr bytes.Buffer
		code := run([]string{"-n", "200", "-latency", "2ms", "-scenarios", "platform"}, &stdout, &stderr)
		Expect(code).To(BeZero(), stderr.String())
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		Expect(lines).To(HaveLen(1), "only the scenario asked for is printed")
		Expect(lines[0]).To(HavePrefix("BENCH {"))
		var doc map[string]any
		Expect(json.Unmarshal([]byte(strings.TrimPrefix(lines[0], "BENCH ")), &doc)).To(Succeed())
		Expect(doc).To(SatisfyAll(HaveKeyWithValue("scenario", "platform-200"), HaveKeyWithValue("deployments", 200.0),
			HaveKeyWithValue("runs_each", float64(platformRuns)), HaveKeyWithValue("platform_state", "known"),
			HaveKeyWithValue("platform_fresh", true), HaveKeyWithValue("platform_instances", 200.0),
			HaveKeyWithValue("platform_counts", map[string]any{"in_step": 200.0, "orphan_deployment": 0.0, "platform_only": 0.0,
				"orphan": 0.0, "creating": 0.0, "absent": 0.0, "not_the_platforms": 0.0}),
			HaveKeyWithValue("platform_problem_count", 0.0), HaveKeyWithValue("manifests_fetched", 0.0),
			HaveKeyWithValue("cc_request_bound", 4.0)), doc)
		Expect(doc["without_s"]).To(HaveLen(platformRuns))
		Expect(doc["with_s"]).To(HaveLen(platformRuns))
		Expect(doc["platform_read_s"]).To(HaveLen(platformRuns))
		Expect(doc["cc_requests"]).To(Equal(2.0), "the broker's plans and one page of instances; the token kept")
		Expect(doc["cc_requests_counted"]).To(Equal(doc["cc_requests"]))
		Expect(doc["cc_routes"]).To(Equal(map[string]any{"GET /v3/service_plans": 1.0, "GET /v3/service_instances": 1.0}))
		for _, k := range []string{"without_median_s", "with_median_s", "platform_read_median_s"} {
			Expect(doc[k]).To(BeNumerically(">", 0), k)
		}
		Expect(doc["added_s"]).To(BeNumerically("~", doc["with_median_s"].(float64)-doc["without_median_s"].(float64), 1e-9))
		Expect(doc["wall_s"]).To(Equal(doc["with_median_s"]))
		Expect(doc["lower_bound_s"]).To(Equal(doc["without_median_s"]))
	})

	It("spreads the deployments over several Directors with -directors", func() {
		var stdout, stderr bytes.Buffer
		code := run([]string{"-n", "40", "-latency", "2ms", "-directors", "2", "-scenarios", "cold,warm,steady,steady-1pct,gap"}, &stdout, &stderr)
		Expect(code).To(BeZero(), stderr.String())
		lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
		Expect(lines).To(HaveLen(5))
		var got []map[string]any
		for _, l := range lines {
			var doc map[string]any
			Expect(json.Unmarshal([]byte(strings.TrimPrefix(l, "BENCH ")), &doc)).To(Succeed())
			Expect(doc).To(HaveKeyWithValue("directors", 2.0))
			got = append(got, doc)
		}
		coldRun, warmRun, gap := got[0], got[1], got[4]
		Expect(coldRun).To(SatisfyAll(HaveKeyWithValue("scenario", "cold-40-2directors"), HaveKeyWithValue("matched", 40.0)))
		Expect(coldRun["director_requests"]).To(HaveKeyWithValue("GET /deployments", 2.0), "each Director listed once")
		Expect(warmRun["director_requests"]).To(Equal(map[string]any{"GET /deployments": 2.0, "GET /events": 2.0, "GET /tasks": 2.0}))
		Expect(warmRun).To(HaveKeyWithValue("counts_met", true))
		for _, doc := range got[2:] {
			Expect(doc).To(HaveKeyWithValue("counts_met", true), "%v", doc)
		}
		Expect(gap).To(SatisfyAll(HaveKeyWithValue("first_director_feed_mode", "resync"), HaveKeyWithValue("manifests_fetched", 20.0)))
	})

	It("refuses a size that is not a positive number", func() {
		var stdout, stderr bytes.Buffer
		Expect(run([]string{"-n", "10,x"}, &stdout, &stderr)).To(Equal(2))
		Expect(stderr.String()).To(ContainSubstring(`-n: "x" is not a positive number`))
		Expect(stdout.String()).To(BeEmpty())
	})
})
