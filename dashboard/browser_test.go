package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/dashboard"
	"github.com/blacksmith-reconciler/blacksmith/internal/testbrowser"
	operatorapi "github.com/blacksmith-reconciler/blacksmith/operator"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// operator is a stand-in for the daemon's operator endpoints: it serves the
// dashboard and the status and instance view it is given, as the daemon
// writes them (the reconciler's own types, as JSON).
type operator struct {
	mu       sync.Mutex
	status   reconciler.Status
	instance reconciler.InstanceView
	upgrades upgradesAnswer
	// posts are the requests POST /b/upgrades got ("?query"); refuse makes
	// it answer 409 as the daemon does while a fleet upgrade runs.
	posts  []string
	refuse bool
	// fleet is what GET /b/instances lists; lists are the queries it got.
	fleet []reconciler.InstanceSummary
	lists []string
	// role is the X-Blacksmith-Role every answer names ("": none).
	role string
	// runs is what GET /b/runs lists (nil: none); restores are the
	// restores POST /b/instances/{id}/restore asked for ("id backup
	// redeploy"), restoreErr fails them.
	runs       []report.Summary
	restores   []string
	restoreErr error
}

// upgradesAnswer is GET /b/upgrades, as the daemon writes it.
type upgradesAnswer struct {
	reconciler.UpgradeStatus
	InstancesLeftOff int      `json:"instances_left_off"`
	Problems         []string `json:"problems"`
}

func (o *operator) setUpgrades(a upgradesAnswer) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.upgrades = a
}

func (o *operator) posted() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.posts)
}

func (o *operator) set(st reconciler.Status, iv reconciler.InstanceView) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.status, o.instance = st, iv
}

func (o *operator) serve() string {
	GinkgoHelper()
	srv := httptest.NewServer(o.handler())
	DeferCleanup(srv.Close)
	return srv.URL
}

// handler is the daemon's root as the operator's side serves it: the
// dashboard and the endpoints it reads and posts to.
func (o *operator) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/dashboard", dashboard.Handler())
	mux.Handle("/dashboard/", dashboard.Handler())
	answer := func(v func() any) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			o.mu.Lock()
			defer o.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			if o.role != "" {
				w.Header().Set("X-Blacksmith-Role", o.role)
			}
			_ = json.NewEncoder(w).Encode(v())
		}
	}
	mux.HandleFunc("GET /b/reconcile", answer(func() any { return o.status }))
	mux.HandleFunc("GET /b/runs", answer(func() any {
		runs := o.runs
		if runs == nil {
			runs = []report.Summary{}
		}
		return map[string]any{"runs": runs, "problems": []string{}}
	}))
	// the daemon's own restore endpoint (its checks of the query), over the
	// stand-in's Rollback, behind the cross-origin protection
	mux.Handle("POST /b/instances/{id}/restore", http.NewCrossOriginProtection().Handler(operatorapi.InstancesHandler(o, o, nil)))
	mux.HandleFunc("GET /b/instances/{id}", answer(func() any { return o.instance }))
	mux.HandleFunc("GET /b/upgrades", answer(func() any { return o.upgrades }))
	list := operatorapi.InstanceListHandler(o.list, nil) // the daemon's own checks of the page's query
	mux.Handle("GET /b/instances", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.lists = append(o.lists, "?"+r.URL.RawQuery)
		o.mu.Unlock()
		list.ServeHTTP(w, r)
	}))
	// behind the daemon's cross-origin protection: the page's POST must pass it
	mux.Handle("POST /b/upgrades", http.NewCrossOriginProtection().Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.posts = append(o.posts, "?"+r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		if o.refuse {
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(map[string]string{"description": "cannot start a fleet upgrade: a fleet upgrade is already running"})
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_ = json.NewEncoder(w).Encode(report.UpgradeReport{ID: "f2", Trigger: "operator", Running: true, Instances: []report.UpgradeResult{}})
	})))
	return mux
}

// chromium is Debian's Chromium (CHROMIUM overrides it); without it the
// specs are skipped, and fail under CI=true (.ci/run installs it).
// idle is a reconciler's status at rest with nothing to report, each list
// empty as the operator API sends it.
func idle() reconciler.Status {
	return reconciler.Status{Enabled: true, Phase: report.PhaseIdle,
		Health:  reconciler.HealthStatus{Instances: []report.UnhealthyInstance{}},
		Orphans: []report.Orphan{}, Unmatched: []report.Unmatched{}, Conflicts: []report.Conflict{},
		Quarantined: []report.Quarantined{}, Blockers: []string{}}
}

// healthyView is an instance's view with nothing in it but a healthy status.
func healthyView() reconciler.InstanceView {
	return reconciler.InstanceView{Backups: []string{}, History: []vault.Event{}, Problems: []string{},
		Health: reconciler.InstanceHealth{Status: "healthy"}}
}

// tableCells are the texts of the cells of table id, row by row.
func tableCells(browser context.Context, id string) [][]string {
	GinkgoHelper()
	var got [][]string
	Expect(chromedp.Run(browser, chromedp.Evaluate(
		`[...document.querySelectorAll("#`+id+` tbody tr")].map((r) => [...r.cells].map((c) => c.textContent))`, &got))).To(Succeed())
	return got
}

// textsOf are the text contents of the elements sels select.
func textsOf(browser context.Context, sels ...string) []string {
	GinkgoHelper()
	got := make([]string, len(sels))
	actions := make([]chromedp.Action, len(sels))
	for i, sel := range sels {
		actions[i] = chromedp.TextContent(sel, &got[i], chromedp.ByQuery)
	}
	Expect(chromedp.Run(browser, actions...)).To(Succeed())
	return got
}

func chromium() context.Context {
	GinkgoHelper()
	ctx, cancel := context.WithTimeout(testbrowser.Start(), time.Minute)
	DeferCleanup(cancel)
	return ctx
}

// rendered reads the text of sel once the page at url has rendered wait,
// and whether the page made any element of the hostile content or ran its
// script.
func rendered(browser context.Context, url, wait, sel string) (string, bool) {
	GinkgoHelper()
	var got string
	var injected bool
	Expect(chromedp.Run(browser,
		chromedp.Navigate(url),
		chromedp.WaitVisible(wait, chromedp.ByQuery),
		chromedp.Text(sel, &got, chromedp.ByQuery),
		chromedp.Evaluate(`window.pwned !== undefined || document.querySelectorAll("main script, main img").length > 0`, &injected),
	)).To(Succeed())
	return got, injected
}

var _ = Describe("the dashboard's VM health, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
		since   time.Time
	)
	// A Director's content, hostile: a process name that is markup, one
	// that a right-to-left override reorders, a zero-width space in a
	// deployment name, markup as a VM's instance and job state.
	const (
		scriptProcess = `<script>window.pwned=1</script>`
		spoofProcess  = "redis-\u202etxt.exe"
		deployment    = "redis-small-a1\u200b"
		imgInstance   = `redis/0 (<img src=x id=pwned>)`
	)

	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
		since = time.Now().Add(-(3*time.Hour + 12*time.Minute + 5*time.Second)).UTC()
	})

	unhealthy := func() report.UnhealthyInstance {
		return report.UnhealthyInstance{InstanceID: "a1", Deployment: deployment, Since: since, CheckedAt: time.Now().UTC(),
			VMs: []report.UnhealthyVM{
				{Instance: imgInstance, CID: "vm-\u202e1", JobState: "failing", Failing: []string{scriptProcess, spoofProcess}},
				{Instance: "redis/1 (b2)", CID: "vm-2", JobState: "unresponsive agent"},
			}}
	}
	status := func(h reconciler.HealthStatus) reconciler.Status {
		return reconciler.Status{Enabled: true, Phase: report.PhaseIdle, Health: h,
			Orphans: []report.Orphan{}, Unmatched: []report.Unmatched{}, Conflicts: []report.Conflict{},
			Quarantined: []report.Quarantined{}, Blockers: []string{},
			LastRun: &report.Summary{RunID: "r1", Result: "success", StartedAt: time.Now().UTC(), Errors: []string{},
				Health: &report.HealthReport{Handed: 43, Named: 1, Busy: 2, Unhealthy: 1}}}
	}
	healthy := reconciler.InstanceView{InstanceID: "a1", Backups: []string{}, History: []vault.Event{}, Problems: []string{},
		Health: reconciler.InstanceHealth{Status: "healthy"}}

	text := func(path, wait, sel string) (string, bool) {
		GinkgoHelper()
		return rendered(browser, base+path, wait, sel)
	}

	It("lists each unhealthy instance: its deployment, since when and for how long, the VMs not running and their processes, as text", func() {
		at := time.Now().UTC()
		loop := report.HealthLoopStatus{Leading: true, TasksAtOnce: 1, Directors: []report.HealthLoopDirector{
			{Director: "east", InFlight: 1, MostAtOnce: 1, Sweep: 17, SlotShare: 42, Checked: 25, Failed: 1, HeldOff: 3, LastCheck: &at}}}
		op.set(status(reconciler.HealthStatus{Unhealthy: 1, Instances: []report.UnhealthyInstance{unhealthy()}, SweepSeconds: 86400, Loop: loop}), healthy)
		got, injected := text("/dashboard", "#unhealthy tbody td a", "#unhealthy")
		Expect(injected).To(BeFalse(), "no element made of the Director's content, no script run")
		Expect(got).To(ContainSubstring("a1"))
		Expect(got).To(ContainSubstring(`redis-small-a1\u200B`), "a hidden character shown escaped")
		Expect(got).To(ContainSubstring("for 3h12m"))
		Expect(got).To(ContainSubstring(strconv.Itoa(since.Year())), "since when, as a date")
		Expect(got).To(ContainSubstring(imgInstance+": failing ("+scriptProcess+`, redis-\u202Etxt.exe)`), "the failing processes, as text")
		Expect(got).To(ContainSubstring(`VM vm-\u202E1`))
		Expect(got).To(ContainSubstring("redis/1 (b2): unresponsive agent"))
		Expect(got).NotTo(ContainSubstring("\u202e"))
		Expect(got).NotTo(ContainSubstring("\u200b"))

		var count, lastRun, loopLine string
		Expect(chromedp.Run(browser, chromedp.Text("#unhealthy-count", &count, chromedp.ByQuery),
			chromedp.Text("#last-run", &lastRun, chromedp.ByQuery), chromedp.Text("#health-loop", &loopLine, chromedp.ByQuery))).To(Succeed())
		Expect(count).To(Equal("(1)"))
		Expect(lastRun).To(ContainSubstring("handed 43 deployments to the health loop (1 named by events, 2 busy); 1 unhealthy"))
		Expect(loopLine).To(ContainSubstring("east: 1 vm-state task(s) running (at most 1, most 1); sweep 17 left of a slot share of 42, 0 to ask first; 25 asked, 1 not answered, held off 3 times"))
	})

	It("says when it lists only the longest unhealthy", func() {
		op.set(status(reconciler.HealthStatus{Unhealthy: 140, Instances: []report.UnhealthyInstance{unhealthy()}, SweepSeconds: 86400}), healthy)
		got, _ := text("/dashboard", "#unhealthy tbody td a", "#unhealthy-more")
		Expect(got).To(Equal("The 1 longest unhealthy of 140."))
	})

	DescribeTable("says what no unhealthy instance means",
		func(sweep float64, want string) {
			op.set(status(reconciler.HealthStatus{Instances: []report.UnhealthyInstance{}, SweepSeconds: sweep}), healthy)
			got, _ := text("/dashboard", "#unhealthy td.empty", "#unhealthy tbody")
			Expect(got).To(Equal(want))
		},
		Entry("with the sweep", 86400.0, "every VM running when last asked; sweep every 24h"),
		Entry("with a weekly sweep", 7*86400.0, "every VM running when last asked; sweep every 7d"),
		Entry("without", 0.0, "none found unhealthy; health sweep off (only the deployments instance, VM and alert events name are asked)"),
	)

	It("shows an instance's health on its page", func() {
		e := unhealthy()
		view := healthy
		view.Health = reconciler.InstanceHealth{Status: "unhealthy", Since: &e.Since, CheckedAt: &e.CheckedAt, Reason: e.Reason(), VMs: e.VMs}
		op.set(status(reconciler.HealthStatus{Instances: []report.UnhealthyInstance{}}), view)
		got, injected := text("/dashboard/instances/a1", "#health dd ul", "#health")
		Expect(injected).To(BeFalse())
		Expect(got).To(And(ContainSubstring("unhealthy"), ContainSubstring("for 3h12m")))
		Expect(got).To(ContainSubstring(scriptProcess + `, redis-\u202Etxt.exe`))
		Expect(got).NotTo(ContainSubstring("\u202e"))

		op.set(status(reconciler.HealthStatus{Instances: []report.UnhealthyInstance{}}), healthy)
		got, _ = text("/dashboard/instances/a1", "#health dd", "#health")
		Expect(got).To(ContainSubstring("healthy"))
		Expect(got).To(ContainSubstring("every VM running when last asked, or not asked yet"))
	})
})

var _ = Describe("the dashboard's outdated instances, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	// A Director's content, hostile: a deployment name that is markup, a
	// recorded version that a right-to-left override reorders.
	const (
		imgDeployment = `redis-<img src=x id=pwned>`
		spoofVersion  = "1.0.0-\u202erc1"
	)

	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
	})

	outdated := func(count int, list ...report.Outdated) *report.OutdatedReport {
		return &report.OutdatedReport{Count: count, ByPlan: map[string]int{"redis-small": count, "redis-large": 0}, Instances: list}
	}
	listed := []report.Outdated{
		{InstanceID: "a1", ServiceID: "redis", PlanID: "redis-small", Deployment: imgDeployment, Version: "", Want: "2.0.0", Adopted: true},
		{InstanceID: "b2", ServiceID: "redis", PlanID: "redis-small", Deployment: "redis-small-b2", Version: spoofVersion, Want: "2.0.0"},
	}
	// status is after a run over every deployment with result, that found o
	// (nil: did not look).
	status := func(result string, o *report.OutdatedReport) reconciler.Status {
		return reconciler.Status{Enabled: true, Phase: report.PhaseIdle, Outdated: o,
			Health:  reconciler.HealthStatus{Instances: []report.UnhealthyInstance{}},
			Orphans: []report.Orphan{}, Unmatched: []report.Unmatched{}, Conflicts: []report.Conflict{},
			Quarantined: []report.Quarantined{}, Blockers: []string{},
			LastRun: &report.Summary{RunID: "r1", Result: result, StartedAt: time.Now().UTC(), Errors: []string{}, Outdated: o}}
	}
	view := func(rec *vault.Record, v *reconciler.InstanceVersion) reconciler.InstanceView {
		return reconciler.InstanceView{InstanceID: "a1", Record: rec, Backups: []string{}, History: []vault.Event{}, Problems: []string{},
			Health: reconciler.InstanceHealth{Status: "healthy"}, Version: v}
	}

	It("lists each outdated instance: its deployment, plan, the version it runs and its plan's, adopted ones marked, as text", func() {
		op.set(status("success", outdated(2, listed...)), view(nil, nil))
		_, injected := rendered(browser, base+"/dashboard", "#outdated tbody td a", "#outdated")
		Expect(injected).To(BeFalse(), "no element made of the Director's content")
		Expect(tableCells(browser, "outdated")).To(Equal([][]string{
			{"a1 adopted", imgDeployment, "redis-small", "unknown", "2.0.0"},
			{"b2", "redis-small-b2", "redis-small", `1.0.0-\u202Erc1`, "2.0.0"},
		}), "the version recorded, a hidden character escaped; unknown when none; only the adopted one marked")

		var count, plans, more, lastRun, href string
		var ok bool
		Expect(chromedp.Run(browser, chromedp.Text("#outdated-count", &count, chromedp.ByQuery),
			chromedp.Text("#outdated-plans", &plans, chromedp.ByQuery),
			chromedp.TextContent("#outdated-more", &more, chromedp.ByQuery),
			chromedp.Text("#last-run", &lastRun, chromedp.ByQuery),
			chromedp.AttributeValue("#outdated tbody td a", "href", &href, &ok, chromedp.ByQuery))).To(Succeed())
		Expect(count).To(Equal("(2)"))
		Expect(plans).To(Equal("by plan: redis-small 2 · redis-large 0"), "every plan, the most first")
		Expect(more).To(BeEmpty(), "all are listed")
		Expect(lastRun).To(ContainSubstring("2 behind their plan's version (redis-small 2 · redis-large 0)"))
		Expect(href).To(Equal("/dashboard/instances/a1"))
	})

	It("lists the instances behind their Director, what each asks for as latest, as text", func() {
		o := outdated(0)
		o.Behind = &report.BehindReport{Count: 1, ByPlan: map[string]int{"redis-small": 1}, Asking: 3, Unknown: 1,
			Errors: []string{"Director west: GET /releases: 503"},
			Instances: []report.Behind{{InstanceID: "a1", PlanID: "redis-small", Deployment: imgDeployment,
				Lags: []report.Lag{{Type: "release", Name: "redis", Running: "16.1.0", Newest: spoofVersion},
					{Type: "stemcell", Name: "ubuntu-jammy", Running: "1.506", Newest: "1.507"}}}}}
		op.set(status("success", o), view(nil, nil))
		_, injected := rendered(browser, base+"/dashboard", "#behind tbody td a", "#behind")
		Expect(injected).To(BeFalse(), "no element made of the Director's content")
		var got [][]string
		var count, facts string
		Expect(chromedp.Run(browser, chromedp.Evaluate(
			`[...document.querySelectorAll("#behind tbody tr")].map((r) => [...r.cells].map((c) => c.textContent))`, &got),
			chromedp.Text("#behind-count", &count, chromedp.ByQuery), chromedp.Text("#behind-facts", &facts, chromedp.ByQuery))).To(Succeed())
		Expect(got).To(Equal([][]string{{"a1", imgDeployment, "redis-small",
			`release redis 16.1.0 → 1.0.0-\u202Erc1, stemcell ubuntu-jammy 1.506 → 1.507`}}))
		Expect(count).To(Equal("(1)"))
		Expect(facts).To(Equal("3 ask for a latest, 1 not known to the last run; could not ask: Director west: GET /releases: 503"))

		op.set(status("success", outdated(0)), view(nil, nil))
		empty, _ := rendered(browser, base+"/dashboard", "#behind td.empty", "#behind tbody")
		Expect(empty).To(Equal("no instance asks for a latest release or stemcell"))
	})

	It("says when it lists only the oldest", func() {
		op.set(status("success", outdated(140, listed...)), view(nil, nil))
		got, _ := rendered(browser, base+"/dashboard", "#outdated tbody td a", "#outdated-more")
		Expect(got).To(Equal("The 2 oldest of 140."))
	})

	DescribeTable("says what no outdated instance means",
		func(st reconciler.Status, count, want string) {
			op.set(st, view(nil, nil))
			got, _ := rendered(browser, base+"/dashboard", "#outdated td.empty", "#outdated tbody")
			Expect(got).To(Equal(want))
			var n string
			Expect(chromedp.Run(browser, chromedp.TextContent("#outdated-count", &n, chromedp.ByQuery))).To(Succeed())
			Expect(n).To(Equal(count))
		},
		Entry("every instance current", status("success", outdated(0)), "(0)", "every instance runs its plan's version"),
		Entry("not looked for by a run that completed", status("success", nil), "", "no plan declares maintenance_info"),
		Entry("not looked for by a run that failed", status("failure", nil), "",
			"none reported: no plan declares maintenance_info, or no run over every deployment got that far"),
		Entry("no run yet", reconciler.Status{Phase: report.PhaseIdle, Orphans: []report.Orphan{}, Unmatched: []report.Unmatched{},
			Conflicts: []report.Conflict{}, Quarantined: []report.Quarantined{}, Blockers: []string{}}, "", "no run yet"),
	)

	It("shows an instance's version on its page", func() {
		rec := &vault.Record{ServiceID: "redis", PlanID: "redis-small"}
		show := func(v *reconciler.InstanceVersion) string {
			GinkgoHelper()
			op.set(status("success", nil), view(rec, v))
			got, injected := rendered(browser, base+"/dashboard/instances/a1", "#version dd", "#version")
			Expect(injected).To(BeFalse())
			return got
		}
		Expect(show(&reconciler.InstanceVersion{Recorded: "", Plan: "2.0.0", Outdated: true})).To(And(
			ContainSubstring("outdated"), ContainSubstring("unknown (adopted from a Director or migrated"), ContainSubstring("2.0.0")))
		got := show(&reconciler.InstanceVersion{Recorded: spoofVersion, Plan: "2.0.0", Outdated: true})
		Expect(got).To(And(ContainSubstring("outdated"), ContainSubstring(`1.0.0-\u202Erc1`), Not(ContainSubstring("\u202e"))))
		Expect(show(&reconciler.InstanceVersion{Recorded: "2.0.0", Plan: "2.0.0"})).To(And(
			ContainSubstring("current"), Not(ContainSubstring("outdated")), Not(ContainSubstring("unknown"))))
		Expect(show(nil)).To(ContainSubstring("its plan declares no maintenance_info"))
	})
})

var _ = Describe("the dashboard for the operator's viewer, in a real browser", func() {
	It("shows a viewer no button that acts, and says it is read-only; an admin sees them", func() {
		browser := chromium()
		visible := func(url, wait string) map[string]bool {
			GinkgoHelper()
			var got map[string]bool
			Expect(chromedp.Run(browser, chromedp.Navigate(url), chromedp.WaitVisible(wait, chromedp.ByQuery),
				chromedp.Sleep(200*time.Millisecond),
				chromedp.Evaluate(`Object.fromEntries(["run-now", "dry-run", "upgrade-all", "upgrade-dry-run", "reconcile-one"]
					.filter((id) => document.getElementById(id))
					.map((id) => [id, document.getElementById(id).offsetParent !== null])
					.concat([["read-only", document.querySelector(".read-only").offsetParent !== null]]))`, &got))).To(Succeed())
			return got
		}
		for _, role := range []string{"viewer", "admin"} {
			op := &operator{role: role}
			op.set(idle(), healthyView())
			base := op.serve()
			acts := role == "admin"
			Expect(visible(base+"/dashboard", "#state")).To(Equal(map[string]bool{"run-now": acts, "dry-run": acts,
				"upgrade-all": acts, "upgrade-dry-run": acts, "read-only": !acts}), role)
			Expect(visible(base+"/dashboard/instances/a1", "#instance-id")).To(Equal(map[string]bool{"reconcile-one": acts,
				"read-only": !acts}), role)
		}
	})
})

var _ = Describe("the dashboard's escapes of hidden characters, in a real browser", func() {
	It("shows every control and format character, separator, private-use or blank one escaped, tab and line feed as they are", func() {
		browser := chromium()
		op := &operator{}
		op.set(idle(), healthyView())
		base := op.serve()
		var got string
		Expect(chromedp.Run(browser, chromedp.Navigate(base+"/dashboard"), chromedp.WaitVisible("#state", chromedp.ByQuery),
			chromedp.Evaluate(`shown("a\u2800b\uFFFC\u{13430}\u{1BCA0}\u202E\u{E0041}\uE000\u200B\u2028c\td\ne")`, &got))).To(Succeed())
		Expect(got).To(Equal(`a\u2800b\uFFFC\u{13430}\u{1BCA0}\u202E\u{E0041}\uE000\u200B\u2028c` + "\td\ne"))
	})
})
