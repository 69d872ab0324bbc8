package dashboard_test

import (
	"context"
	"fmt"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("the dashboard's drift, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	// A Director's content, hostile: a deployment name and a property name
	// that are markup, a group name that a right-to-left override reorders.
	const (
		imgDeployment = `redis-small-a1<img src=x id=pwned>`
		scriptProp    = `<script>window.pwned=1</script>`
		spoofGroup    = "redis-\u202etxt.exe"
	)
	at := time.Date(2026, 11, 28, 9, 30, 0, 0, time.UTC)

	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
	})

	// run is a run that found drifted (and, uncounted, more).
	run := func(id string, started time.Time, more int, drifted ...report.Drifted) *report.Summary {
		return &report.Summary{RunID: id, Result: "success", StartedAt: started, Errors: []string{},
			Drift: len(drifted) + more, Drifted: drifted}
	}

	for _, width := range []int64{1400, 390} {
		It(fmt.Sprintf("names each drifted instance of the recent runs with what changed, once, as text (%d px)", width), func() {
			Expect(chromedp.Run(browser, chromedp.EmulateViewport(width, 900))).To(Succeed())
			st := idle()
			st.LastRun = run("r3", at, 0)
			op.runs = []report.Summary{*st.LastRun,
				*run("r2", at.Add(-time.Hour), 2,
					report.Drifted{InstanceID: "a1", Deployment: imgDeployment, Changed: map[string]string{"changes": "2",
						"diff_groups": spoofGroup, "diff_properties": scriptProp + ", maxmemory"}},
					report.Drifted{InstanceID: "b2", Deployment: "redis-small-b2", Changed: map[string]string{"diff_error": "the manifest before is not YAML"}}),
				*run("r1", at.Add(-2*time.Hour), 0,
					report.Drifted{InstanceID: "a1", Deployment: imgDeployment, Changed: map[string]string{"changes": "1", "diff_releases": "redis"}}),
			}
			op.set(st, healthyView())
			_, injected := rendered(browser, base+"/dashboard", "#drift tbody td a", "#drift")
			Expect(injected).To(BeFalse(), "no element made of the Director's content, no script run")
			cells := tableCells(browser, "drift")
			Expect(cells).To(HaveLen(2), "each instance once: its newest finding")
			Expect(cells[0][:3]).To(Equal([]string{"a1", `changes 2; groups: redis-\u202Etxt.exe; properties: ` + scriptProp + ", maxmemory", imgDeployment}))
			Expect(cells[0][3]).To(ContainSubstring("2026"))
			Expect(cells[1][:3]).To(Equal([]string{"b2", "could not be compared: the manifest before is not YAML", "redis-small-b2"}))
			Expect(textsOf(browser, "#drift-count", "#drift-more")).To(Equal([]string{"(2)", "2 more found, not named (a run names its first 100)."}))
			var visible []string
			Expect(chromedp.Run(browser, chromedp.Evaluate(`[...document.querySelectorAll("#drift thead th")]
				.filter((c) => getComputedStyle(c).display !== "none").map((c) => c.textContent)`, &visible))).To(Succeed())
			Expect(visible).To(ContainElements("instance", "what changed"), "what an operator acts on, on a narrow screen too")
			var href string
			var ok bool
			Expect(chromedp.Run(browser, chromedp.AttributeValue("#drift tbody td a", "href", &href, &ok, chromedp.ByQuery))).To(Succeed())
			Expect(href).To(Equal("/dashboard/instances/a1"))
		})

		It(fmt.Sprintf("names on an instance's page what its drift changed (%d px)", width), func() {
			Expect(chromedp.Run(browser, chromedp.EmulateViewport(width, 900))).To(Succeed())
			v := healthyView()
			v.InstanceID = "a1"
			v.History = []vault.Event{{Time: at, Kind: "drift", Actor: "reconciler", Deployment: imgDeployment,
				Message: "manifest changed outside the broker (was sha256 abc)",
				Details: map[string]string{"changes": "3", "diff_properties": scriptProp, "diff_guarded": "variable instance_groups/redis/jobs/redis/properties/redis/password"}}}
			op.set(idle(), v)
			_, injected := rendered(browser, base+"/dashboard/instances/a1", "#history tbody td", "#history")
			Expect(injected).To(BeFalse())
			cells := tableCells(browser, "history")
			Expect(cells).To(HaveLen(1))
			Expect(cells[0][1]).To(Equal("drift"))
			Expect(cells[0][3]).To(Equal("manifest changed outside the broker (was sha256 abc) — changes 3; properties: " + scriptProp +
				"; guarded: variable instance_groups/redis/jobs/redis/properties/redis/password"))
			var visible []string
			Expect(chromedp.Run(browser, chromedp.Evaluate(`[...document.querySelectorAll("#history thead th")]
				.filter((c) => getComputedStyle(c).display !== "none").map((c) => c.textContent)`, &visible))).To(Succeed())
			Expect(visible).To(ContainElements("event", "message"), "what changed, on a narrow screen too")
		})
	}

	It("says when no run found drift", func() {
		st := idle()
		st.LastRun = run("r1", at, 0)
		op.set(st, healthyView())
		got, _ := rendered(browser, base+"/dashboard", "#drift td.empty", "#drift tbody")
		Expect(got).To(Equal("no manifest changed behind the broker's back in the recent runs"))
		Expect(textsOf(browser, "#drift-count")).To(Equal([]string{"(0)"}))
	})
})
