package dashboard_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// requests records the paths a server was asked for.
type requests struct {
	mu    sync.Mutex
	paths []string
}

func (q *requests) add(path string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.paths = append(q.paths, path)
}

func (q *requests) list() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.paths)
}

var _ = Describe("the dashboard, however it is opened, in a real browser", func() {
	var (
		op      *operator
		browser context.Context
	)
	const (
		user = "admin"
		pass = "s3cret"
		// long is a value wider than a phone, its last part without a
		// place to break a line: a Director's deployment name, an error.
		long = "redis-dedicated-cluster-with-a-very-long-name-and-no-place-to-break_" +
			"0123456789abcdef0123456789abcdef0123456789abcdef"
		id = "6f1e9c2a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"
	)

	BeforeEach(func() {
		op = &operator{}
		browser = chromium()
		started := time.Now().Add(-time.Hour).UTC()
		since := time.Now().Add(-3 * time.Hour).UTC()
		outdated := &report.OutdatedReport{Count: 1, ByPlan: map[string]int{"redis-dedicated-cluster-large": 1},
			Instances: []report.Outdated{{InstanceID: id, ServiceID: "redis", PlanID: "redis-dedicated-cluster-large",
				Deployment: long, Version: "1.0.0", Want: "2.0.0"}}}
		op.set(reconciler.Status{Enabled: true, Phase: report.PhaseIdle, Converged: true, Outdated: outdated,
			Health: reconciler.HealthStatus{Unhealthy: 1, SweepSeconds: 86400, Instances: []report.UnhealthyInstance{{
				InstanceID: id, Deployment: long, Since: since, CheckedAt: started,
				VMs: []report.UnhealthyVM{{Instance: "redis/0 (" + id + ")", CID: "vm-" + id, JobState: "failing",
					Failing: []string{long}}}}}},
			Orphans:     []report.Orphan{{InstanceID: id, Deployment: long, OrphanedAt: started}},
			Unmatched:   []report.Unmatched{{Deployment: long, Reason: "no strategy matched: " + long}},
			Conflicts:   []report.Conflict{{InstanceID: id, Winner: long, Loser: long + "-2"}},
			Quarantined: []report.Quarantined{{InstanceID: id, Failures: 3, LastError: long, NextAttempt: started}},
			Blockers:    []string{},
			LastRun: &report.Summary{RunID: "r1", Result: "success", StartedAt: started, DurationSeconds: 12.5,
				DeploymentsSeen: 40, Matched: 39, Errors: []string{}, Outdated: outdated}},
			reconciler.InstanceView{InstanceID: id, Deployment: long, Backups: []string{"20260511T030000Z-" + long},
				Record:   &vault.Record{ServiceID: "redis", PlanID: "redis-dedicated-cluster-large", Director: long, Adopted: true},
				History:  []vault.Event{{Time: started, Kind: "updated", Actor: "reconciler", Message: long}},
				Problems: []string{}, Health: reconciler.InstanceHealth{Status: "healthy"}})
	})

	// shown is what the page shows: the run's state, whether it converged
	// and the page's error (none: hidden).
	shown := func() []string {
		var got []string
		if chromedp.Run(browser, chromedp.Evaluate(`[document.getElementById("run-state")?.dataset.state || "",
			document.getElementById("converged")?.textContent || "",
			document.getElementById("error")?.hidden === false ? document.getElementById("error").textContent : ""]`, &got)) != nil {
			return nil
		}
		return got
	}

	// loaded opens the overview at url and waits for it to show the status.
	loaded := func(url string) {
		GinkgoHelper()
		Expect(chromedp.Run(browser, chromedp.Navigate(url))).To(Succeed())
		Eventually(shown).WithTimeout(10*time.Second).Should(HaveExactElements("idle", HavePrefix("Converged"), ""),
			"the status, and no error (Chromium refuses fetch() of a URL that includes credentials)")
		Expect(chromedp.Run(browser, chromedp.WaitVisible("#orphans tbody td a", chromedp.ByQuery))).To(Succeed())
	}

	// follow clicks the first instance link of the overview and waits for
	// the instance's page to show its record; it says where the browser
	// went, the record and the page's error.
	follow := func() (at, record, problem string) {
		GinkgoHelper()
		Expect(chromedp.Run(browser,
			// at once: the overview renders its tables again as it polls
			chromedp.Evaluate(`document.querySelector("#orphans tbody td a").click()`, nil),
			chromedp.WaitVisible(`body[data-page="instance"] #record dd`, chromedp.ByQuery),
			chromedp.Location(&at),
			chromedp.Text("#record", &record, chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("error").hidden ? "" : document.getElementById("error").textContent`, &problem),
		)).To(Succeed())
		return at, record, problem
	}

	It("works opened with the credentials in the URL (http://user:pass@host/dashboard)", func() {
		seen := &requests{}
		h := op.handler()
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// the daemon's basic auth, in front of the dashboard and the endpoints
			u, p, ok := r.BasicAuth()
			if !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="blacksmith"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			seen.add(r.Method + " " + r.URL.Path)
			h.ServeHTTP(w, r)
		}))
		DeferCleanup(srv.Close)
		withCredentials := strings.Replace(srv.URL, "http://", "http://"+user+":"+pass+"@", 1)

		loaded(withCredentials + "/dashboard")
		Expect(seen.list()).To(ContainElements("GET /b/reconcile", "GET /b/runs", "GET /b/upgrades"), "with the credentials")
		var background string
		Expect(chromedp.Run(browser, chromedp.Evaluate(`getComputedStyle(document.body).backgroundColor`, &background))).To(Succeed())
		Expect(background).To(Equal("rgb(244, 246, 249)"), "the style sheet applied")

		Expect(chromedp.Run(browser, chromedp.Click("#upgrade-all", chromedp.ByQuery))).To(Succeed())
		Eventually(op.posted).Should(Equal([]string{"?"}), "Upgrade all posted, past the cross-origin protection")
		var problem string
		Expect(chromedp.Run(browser, chromedp.Evaluate(`document.getElementById("upgrade-error").hidden ? "" : document.getElementById("upgrade-error").textContent`, &problem))).To(Succeed())
		Expect(problem).To(BeEmpty())

		at, record, problem := follow()
		Expect(problem).To(BeEmpty())
		Expect(record).To(ContainSubstring(long))
		to, err := url.Parse(at)
		Expect(err).NotTo(HaveOccurred())
		Expect(to.Path).To(Equal("/dashboard/instances/" + id))
		Expect(seen.list()).To(ContainElement("GET /b/instances/" + id))
	})

	It("works behind a reverse proxy that serves it under a path prefix (/blacksmith/dashboard)", func() {
		outside := &requests{}
		inside := &requests{}
		h := op.handler()
		front := http.NewServeMux()
		front.Handle("/blacksmith/", http.StripPrefix("/blacksmith", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inside.add(r.Method + " " + r.URL.Path)
			h.ServeHTTP(w, r)
		})))
		front.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/favicon.ico" {
				outside.add(r.Method + " " + r.URL.Path)
			}
			http.NotFound(w, r)
		})
		srv := httptest.NewServer(front)
		DeferCleanup(srv.Close)

		loaded(srv.URL + "/blacksmith/dashboard")
		var background, href, footer string
		Expect(chromedp.Run(browser,
			chromedp.Evaluate(`getComputedStyle(document.body).backgroundColor`, &background),
			chromedp.Evaluate(`document.querySelector("#orphans tbody td a").href`, &href),
			chromedp.Evaluate(`document.querySelector("footer a").href`, &footer),
		)).To(Succeed())
		Expect(background).To(Equal("rgb(244, 246, 249)"), "the style sheet, under the prefix, applied")
		Expect(href).To(Equal(srv.URL + "/blacksmith/dashboard/instances/" + id))
		Expect(footer).To(Equal(srv.URL + "/blacksmith/dashboard"))
		Expect(inside.list()).To(ContainElements("GET /dashboard/static/style.css", "GET /dashboard/static/app.js",
			"GET /b/reconcile", "GET /b/runs", "GET /b/upgrades"))

		Expect(chromedp.Run(browser, chromedp.Click("#upgrade-dry-run", chromedp.ByQuery))).To(Succeed())
		Eventually(op.posted).Should(Equal([]string{"?dry_run=true"}))

		at, record, problem := follow()
		Expect(problem).To(BeEmpty())
		Expect(record).To(ContainSubstring(long))
		Expect(at).To(Equal(srv.URL + "/blacksmith/dashboard/instances/" + id))
		Expect(inside.list()).To(ContainElement("GET /b/instances/" + id))
		Expect(chromedp.Run(browser,
			chromedp.Evaluate(`getComputedStyle(document.body).backgroundColor`, &background),
			chromedp.Evaluate(`document.querySelector("h1 a").href`, &href),
		)).To(Succeed())
		Expect(background).To(Equal("rgb(244, 246, 249)"), "the instance page's style sheet too")
		Expect(href).To(Equal(srv.URL + "/blacksmith/dashboard"))
		Expect(outside.list()).To(BeEmpty(), "nothing asked for outside the prefix")
	})

	It("fits a narrow screen (360 px): nothing wider than the screen, every value wrapped inside its card", func() {
		// every card filled: the upgrades and the platform too
		st := op.status
		st.Platform = &report.PlatformReport{State: "known", Fresh: true, ReadAt: time.Now().UTC(), Requests: 7, Seconds: 0.84,
			Plans: 3, Instances: 41, Counts: map[string]int{report.InStep: 39, report.OrphanDeployment: 1,
				report.PlatformOnly: 1},
			OrphanDeployments: []report.PlatformInstance{{InstanceID: id, State: report.OrphanDeployment,
				Deployment: long, Director: long, AbsentSince: time.Now().Add(-50 * time.Hour).UTC(), Reads: 3}},
			PlatformOnly: []report.PlatformInstance{{InstanceID: id, State: report.PlatformOnly, Restorable: "backup",
				Platform: &report.PlatformRecord{Name: long, Organization: long, Space: long, Operation: "create succeeded"}}}}
		op.set(st, op.instance)
		op.setUpgrades(upgradesAnswer{UpgradeStatus: reconciler.UpgradeStatus{Mode: "report",
			Current: &report.UpgradeReport{ID: "f1", Trigger: "operator", StartedAt: time.Now().UTC(), Running: true,
				Rules:  report.UpgradeRules{Canaries: 1, MaxInFlight: 5, MaxFailures: 1, AttemptLimit: 5},
				Counts: map[string]int{"failed": 1},
				Instances: []report.UpgradeResult{{InstanceID: id, Deployment: long, PlanID: "redis-dedicated-cluster-large",
					From: "1.0.0", To: "2.0.0", State: "failed", Reason: long, TaskID: 12}}},
			Quarantined: []report.UpgradeQuarantined{{InstanceID: id, Failures: 2, Version: "2.0.0", State: "failed",
				Reason: long, NextAttempt: time.Now().Add(time.Hour)}}}, Problems: []string{}})
		base := op.serve()
		Expect(chromedp.Run(browser, chromedp.EmulateViewport(360, 740, chromedp.EmulateMobile))).To(Succeed())

		// wide are the elements that reach past the screen's edges, and
		// the cards whose content reaches past theirs (hidden there, to be
		// scrolled to): none but the page's width.
		wide := func() []string {
			GinkgoHelper()
			var got []string
			Expect(chromedp.Run(browser, chromedp.Evaluate(`(() => {
			const past = (e) => {
				const r = e.getBoundingClientRect();
				return r.width > 0 && (r.right > 360.5 || r.left < -0.5);
			};
			return [
				...[document.documentElement, document.body].filter((e) => e.scrollWidth > 360).map((e) => e.tagName + " " + e.scrollWidth + " px wide"),
				...[...document.querySelectorAll("body *")].filter(past).filter((e) => !past(e.parentElement))
					.map((e) => e.tagName + (e.id ? "#" + e.id : "") + " reaches past the screen"),
				...[...document.querySelectorAll(".card")].filter((c) => !c.hidden && c.scrollWidth > c.clientWidth)
					.map((c) => "card " + (c.id || c.querySelector("h2").textContent) + ": " + c.scrollWidth + " px in " + c.clientWidth),
			];
			})()`, &got))).To(Succeed())
			return got
		}

		loaded(base + "/dashboard")
		var viewport int
		Expect(chromedp.Run(browser,
			chromedp.WaitVisible("#platform-only tbody td a", chromedp.ByQuery),
			chromedp.WaitVisible("#upgrade-instances tbody td a", chromedp.ByQuery),
			chromedp.Evaluate(`window.innerWidth`, &viewport))).To(Succeed())
		Expect(viewport).To(Equal(360), "laid out for the phone's width (meta viewport)")
		Expect(wide()).To(BeEmpty(), "the overview")

		_, record, problem := follow()
		Expect(problem).To(BeEmpty())
		Expect(record).To(ContainSubstring(long))
		Expect(wide()).To(BeEmpty(), "an instance's page")
	})
})
