package dashboard_test

import (
	"context"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("the dashboard's platform cross-check, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	// The platform's content and a shared Director's, hostile: an instance
	// name that is markup (whose onerror would run were it made an
	// element), a space that a right-to-left override reorders, a Director
	// name that is a script.
	const (
		imgName        = `<img src=x onerror=alert(1)>`
		spoofSpace     = "dev-\u202eexe"
		scriptDirector = `<script>window.pwned=1</script>`
	)
	readAt := time.Date(2026, 5, 11, 3, 0, 0, 0, time.UTC)

	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
	})

	// status is the reconciler's status with the platform report p (nil:
	// no platform configured).
	status := func(p *report.PlatformReport) reconciler.Status {
		s := idle()
		s.Platform = p
		return s
	}
	view := healthyView()
	counts := func(inStep, orphanDeployments, platformOnly int) map[string]int {
		return map[string]int{report.InStep: inStep, report.OrphanDeployment: orphanDeployments,
			report.PlatformOnly: platformOnly, report.OrphanOnPlatform: 0, report.Creating: 0,
			report.Absent: 0}
	}
	// known is a whole read of the platform by the last run that found an
	// orphan deployment on the default Director and one on a shared one, and
	// an instance only the platform has.
	known := func() *report.PlatformReport {
		return &report.PlatformReport{State: "known", Fresh: true, ReadAt: readAt, Requests: 7, Seconds: 0.84,
			Plans: 3, Instances: 41, Counts: counts(40, 2, 1), Unchecked: 0,
			OrphanDeployments: []report.PlatformInstance{
				{InstanceID: "a1", State: report.OrphanDeployment, Deployment: "redis-small-a1", PlanID: "redis-small",
					AbsentSince: time.Now().Add(-50 * time.Hour).UTC(), Reads: 3, DeleteAfter: time.Now().Add(100 * time.Hour).UTC()},
				{InstanceID: "b2", State: report.OrphanDeployment, Deployment: "redis-small-b2", PlanID: "redis-small",
					Director: scriptDirector},
			},
			PlatformOnly: []report.PlatformInstance{
				{InstanceID: "c3", State: report.PlatformOnly, PlanID: "redis-small", Restorable: "backup",
					Platform: &report.PlatformRecord{Name: imgName, Organization: "org-a", Space: spoofSpace,
						Operation: "create succeeded"}},
			}}
	}

	It("shows the platform's state, the counts, the orphan deployments and the platform-only instances, as text", func() {
		p := known()
		p.Counts[report.Creating] = 2
		p.Stopped = []report.Remediation{{InstanceID: "e5", Deployment: "redis-small-e5", Action: "stop", TaskID: 11, Backup: "b-0"}}
		p.Started = []report.Remediation{{InstanceID: "f6", Deployment: "redis-small-f6", Action: "start", TaskID: 13}}
		p.Deleted = []report.Remediation{{InstanceID: "a1", Deployment: "redis-small-a1", Action: "delete", TaskID: 12, Backup: "b-1"},
			{InstanceID: "d4", Deployment: "redis-small-d4", Action: "delete", Error: "busy: task 9 runs"}}
		op.set(status(p), view)
		_, injected := rendered(browser, base+"/dashboard", "#platform-orphans tbody td a", "#platform-card")
		Expect(injected).To(BeFalse(), "no element made of the platform's or the Director's content, no script run")

		Expect(tableCells(browser, "platform-orphans")).To(HaveLen(2))
		Expect(tableCells(browser, "platform-orphans")[0][:3]).To(Equal([]string{"a1", "redis-small-a1", "default"}))
		Expect(tableCells(browser, "platform-orphans")[0][3]).To(ContainSubstring("(for 2d2h)"), "absent since when, and for how long")
		Expect(tableCells(browser, "platform-orphans")[0][4]).To(Equal("3"))
		Expect(tableCells(browser, "platform-orphans")[0][5]).To(HavePrefix("stopped; deleted after "), "a retiring one says when it goes")
		Expect(tableCells(browser, "platform-orphans")[1]).To(Equal([]string{"b2", "redis-small-b2", scriptDirector, "", "", ""}))
		Expect(tableCells(browser, "platform-only")).To(Equal([][]string{
			{"c3", imgName, `org-a / dev-\u202Eexe`, "create succeeded", "backup"},
		}), "the platform's name as text, the hidden character escaped")

		var imgs int
		var href string
		var ok bool
		Expect(chromedp.Run(browser,
			chromedp.Evaluate(`document.querySelectorAll("#platform-card img, #platform-card script").length`, &imgs),
			chromedp.AttributeValue("#platform-only tbody td a", "href", &href, &ok, chromedp.ByQuery))).To(Succeed())
		Expect(imgs).To(BeZero())
		Expect(href).To(Equal("/dashboard/instances/c3"), "the instance's view")

		got := textsOf(browser, "#platform-state", "#platform-counts", "#platform-read", "#platform-orphans-count", "#platform-only-count",
			"#platform-deleted", "#platform-card")
		Expect(got[0]).To(And(HavePrefix("known read "), ContainSubstring("2026"), HaveSuffix("by the last run")))
		Expect(got[1]).To(Equal("in step40orphan deployments2platform only1creating on the platform2"),
			"the orphans' counts left out at 0, creating shown when some are")
		Expect(got[2]).To(Equal("The platform lists 41 of the broker's instances in 3 plans. This run's read: 7 requests, 0.84 s."))
		Expect(got[3:5]).To(Equal([]string{"(2)", "(1)"}))
		Expect(got[5]).To(Equal("e5: stop redis-small-e5 (task 11, after backup b-0)f6: start redis-small-f6 (task 13)" +
			"a1: delete redis-small-a1 (task 12, after backup b-1)d4: delete redis-small-d4 failed: busy: task 9 runs"))
		Expect(got[6]).NotTo(ContainSubstring("\u202e"))
	})

	It("always shows the orphan deployments and the platform-only instances, at 0, and says what none means", func() {
		p := known()
		p.Counts, p.Unchecked = counts(40, 0, 0), 3
		p.OrphanDeployments, p.PlatformOnly = []report.PlatformInstance{}, []report.PlatformInstance{}
		op.set(status(p), view)
		counted, _ := rendered(browser, base+"/dashboard", "#platform-only td.empty", "#platform-counts")
		Expect(counted).To(Equal("in step\n40\norphan deployments\n0\nplatform only\n0\nnot judged\n" +
			"3 (Director out of the run, too young, created after the read or busy)"))
		Expect(tableCells(browser, "platform-orphans")).To(Equal([][]string{{"none: the platform has every instance Vault and the Directors have"}}))
		Expect(tableCells(browser, "platform-only")).To(Equal([][]string{{"none: Vault has every instance the platform has"}}))
		var deletedShown bool
		Expect(chromedp.Run(browser, chromedp.Evaluate(`!document.getElementById("platform-deleted-part").hidden`, &deletedShown))).To(Succeed())
		Expect(deletedShown).To(BeFalse(), "nothing deleted: no list")
	})

	It("says when it lists only the first", func() {
		p := known()
		p.Counts[report.OrphanDeployment] = 250
		op.set(status(p), view)
		got, _ := rendered(browser, base+"/dashboard", "#platform-orphans tbody td a", "#platform-orphans-more")
		Expect(got).To(Equal("The first 2 of 250, by instance id."))
		Expect(textsOf(browser, "#platform-only-more")).To(Equal([]string{""}))
	})

	It("shows a view from an earlier run as such, and a refusal to delete as a warning", func() {
		p := known()
		p.Fresh = false
		p.Refused = "the reconciler runs without the broker: orphan deployments are only reported"
		op.set(status(p), view)
		state, _ := rendered(browser, base+"/dashboard", "#platform-refused", "#platform-state")
		Expect(state).To(And(HavePrefix("known read "), HaveSuffix("(from an earlier run)")))
		var refused, class, read string
		Expect(chromedp.Run(browser, chromedp.Text("#platform-refused", &refused, chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("platform-refused").className`, &class),
			chromedp.TextContent("#platform-read", &read, chromedp.ByQuery))).To(Succeed())
		Expect(refused).To(Equal("Orphan deployments not stopped or deleted: the reconciler runs without the broker: orphan deployments are only reported"))
		Expect(class).To(Equal("warning"))
		Expect(read).To(Equal("The platform lists 41 of the broker's instances in 3 plans. "), "no read by this run to tell of")
	})

	It("shows an unknown platform with its reason, as a warning, and judges nothing", func() {
		reason := "GET /v3/service_instances: 503 " + imgName
		op.set(status(&report.PlatformReport{State: "unknown", Reason: reason, Fresh: true, ReadAt: readAt, Requests: 2,
			Seconds: 30, Counts: map[string]int{}, OrphanDeployments: []report.PlatformInstance{},
			PlatformOnly: []report.PlatformInstance{}}), view)
		state, injected := rendered(browser, base+"/dashboard", "#platform-card", "#platform-state")
		Expect(injected).To(BeFalse())
		Expect(state).To(And(HavePrefix("unknown "+reason+"; last read whole "), ContainSubstring("2026"),
			HaveSuffix("; no instance is judged against it")))
		var warning, badge string
		var countsShown bool
		Expect(chromedp.Run(browser,
			chromedp.Text("#platform-state .warning", &warning, chromedp.ByQuery),
			chromedp.Evaluate(`document.querySelector("#platform-state .badge").className`, &badge),
			chromedp.Evaluate(`!document.getElementById("platform-counts").hidden`, &countsShown))).To(Succeed())
		Expect(warning).To(HavePrefix(reason))
		Expect(badge).To(Equal("badge partial"))
		Expect(countsShown).To(BeFalse(), "no count of an unread platform")
		Expect(tableCells(browser, "platform-orphans")).To(Equal([][]string{{"not judged: the platform is unknown"}}))
		Expect(tableCells(browser, "platform-only")).To(Equal([][]string{{"not judged: the platform is unknown"}}))
		Expect(textsOf(browser, "#platform-orphans-count", "#platform-read")).To(Equal([]string{"", "This run's read: 2 requests, 30 s."}))
	})

	It("has no platform card without a platform", func() {
		op.set(status(nil), view)
		_, _ = rendered(browser, base+"/dashboard", "#orphans td.empty", "#orphans")
		var shown bool
		Expect(chromedp.Run(browser, chromedp.Evaluate(`!document.getElementById("platform-card").hidden`, &shown))).To(Succeed())
		Expect(shown).To(BeFalse())

		op.set(status(known()), view)
		_, _ = rendered(browser, base+"/dashboard", "#platform-card", "#platform-card")
		Expect(chromedp.Run(browser, chromedp.Evaluate(`!document.getElementById("platform-card").hidden`, &shown))).To(Succeed())
		Expect(shown).To(BeTrue(), "the same page shows it once the status has a platform")
	})
})
