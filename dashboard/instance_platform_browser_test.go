package dashboard_test

import (
	"context"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("the instance page's platform part, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	// The platform's content, hostile: an instance name that is markup
	// (whose onerror would run were it made an element), one that is a
	// script, a space that a right-to-left override reorders.
	const (
		imgName    = `<img src=x onerror=alert(1)>`
		scriptName = `<script>window.pwned=1</script>`
		spoofSpace = "dev-\u202eexe"
	)
	readAt := time.Date(2026, 5, 11, 3, 0, 0, 0, time.UTC)
	updatedAt := time.Date(2026, 4, 2, 9, 30, 0, 0, time.UTC)

	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
	})

	status := idle()
	// view is the instance view of a1 with the platform part p, with a Vault
	// record and a history unless lost (a platform-only instance: neither).
	view := func(p *reconciler.InstancePlatform, lost bool) reconciler.InstanceView {
		v := reconciler.InstanceView{InstanceID: "a1", Backups: []string{}, History: []vault.Event{}, Problems: []string{},
			Health: reconciler.InstanceHealth{Status: "healthy"}, Platform: p}
		if !lost {
			v.Deployment = "redis-small-a1"
			v.Record = &vault.Record{ServiceID: "redis", PlanID: "redis-small"}
			v.Match = &reconciler.RecordedMatch{Strategy: "name", Confidence: 1}
			v.History = []vault.Event{{Time: readAt, Kind: "provision", Actor: "broker", Message: "provisioned"}}
		}
		return v
	}
	record := func(name string) *report.PlatformRecord {
		return &report.PlatformRecord{Name: name, Organization: "org-a", Space: spoofSpace, SpaceGUID: "space-guid-1",
			PlanID: "plan-guid-small", Operation: "create succeeded", UpdatedAt: updatedAt}
	}
	// shown says whether the element id is shown (not hidden).
	shown := func(id string) bool {
		GinkgoHelper()
		var visible bool
		Expect(chromedp.Run(browser, chromedp.Evaluate(`!document.getElementById("`+id+`").hidden`, &visible))).To(Succeed())
		return visible
	}
	// open renders the instance page once wait shows, and checks that it
	// made no element of the platform's content and ran none of it.
	open := func(wait string) {
		GinkgoHelper()
		_, injected := rendered(browser, base+"/dashboard/instances/a1", wait, "main")
		Expect(injected).To(BeFalse(), "no element made of the platform's content, no script run")
		var elements int
		Expect(chromedp.Run(browser, chromedp.Evaluate(
			`document.querySelectorAll("#platform-card img, #platform-card script, #lost img, #lost script").length`, &elements))).To(Succeed())
		Expect(elements).To(BeZero())
	}

	It("shows the platform's record of an instance: its name, organization / space, plan, last operation and when read, as text", func() {
		op.set(status, view(&reconciler.InstancePlatform{View: "known", ReadAt: readAt, Record: record(imgName)}, false))
		open("#platform dd")
		got := textsOf(browser, "#platform-view", "#platform")
		Expect(got[0]).To(And(HavePrefix("As read "), ContainSubstring("2026"), HaveSuffix(".")))
		Expect(got[1]).To(And(HavePrefix("name"+imgName+"organization / spaceorg-a / "+`dev-\u202Eexe`+
			"space guidspace-guid-1planplan-guid-smalllast operationcreate succeeded, "), ContainSubstring("2026")),
			"the platform's name as text, the hidden character escaped, the last operation with its date")
		Expect(got[1]).NotTo(ContainSubstring("\u202e"))
		Expect(shown("platform-orphan")).To(BeFalse())
		Expect(shown("lost")).To(BeFalse(), "Vault has its record")
	})

	It("says the platform has not been read whole yet", func() {
		op.set(status, view(&reconciler.InstancePlatform{View: "unknown"}, false))
		open("#platform-card")
		Expect(textsOf(browser, "#platform-view")).To(Equal([]string{
			"Not known yet: the platform has not been read whole yet (nothing is judged against it)."}))
		var class string
		Expect(chromedp.Run(browser, chromedp.Evaluate(`document.getElementById("platform-view").className`, &class))).To(Succeed())
		Expect(class).To(Equal("warning"))
		Expect(shown("platform")).To(BeFalse(), "no record to show")
		Expect(shown("platform-orphan")).To(BeFalse())
		Expect(shown("lost")).To(BeFalse())
	})

	It("says the platform has no such instance", func() {
		op.set(status, view(&reconciler.InstancePlatform{View: "known", ReadAt: readAt}, false))
		open("#platform-card")
		got := textsOf(browser, "#platform-view")[0]
		Expect(got).To(And(HavePrefix("The platform (as read "), ContainSubstring("2026"), HaveSuffix(") has no such instance.")))
		Expect(shown("platform")).To(BeFalse())
		Expect(shown("platform-orphan")).To(BeFalse(), "not proven an orphan deployment")
		Expect(shown("lost")).To(BeFalse())
	})

	It("shows an orphan deployment's proof and what the remediation does with it", func() {
		op.set(status, view(&reconciler.InstancePlatform{View: "known", ReadAt: readAt,
			AbsentSince: time.Now().Add(-50 * time.Hour).UTC(), Reads: 3}, false))
		open("#platform-orphan")
		got := textsOf(browser, "#platform-view", "#platform-orphan")
		Expect(got[0]).To(HaveSuffix(") has no such instance."))
		Expect(got[1]).To(And(
			HavePrefix("An orphan deployment: its deployment runs and Vault holds its records, but the platform has not had it in 3 reads since "),
			ContainSubstring("(for 2d2h)"),
			HaveSuffix(". The remediation (reconciler.remediation.orphan_deployments: delete) deletes it after a backup once proven.")))
		Expect(shown("lost")).To(BeFalse())
	})

	It("shows a banner that the broker lost an instance only the platform has, and how it comes back", func() {
		op.set(status, view(&reconciler.InstancePlatform{View: "known", ReadAt: readAt, Record: record(scriptName)}, true))
		open("#lost")
		got := textsOf(browser, "#lost h2", "#lost-text", "#lost code", "#record", "#platform", "#history tbody")
		Expect(got[0]).To(Equal("The broker has lost this instance"))
		Expect(got[1]).To(Equal("The platform has this instance; Vault has no record of it, so the broker cannot bind, update or delete it. " +
			"It is restored from its deployment by the next runs if one runs, else from a backup with blacksmith restore -c FILE a1."))
		Expect(got[2]).To(Equal("blacksmith restore -c FILE a1"))
		Expect(got[3]).To(Equal("Vaultno record of this instance"), "no record shown as one")
		Expect(got[4]).To(HavePrefix("name"+scriptName+"organization / spaceorg-a / "), "the platform's record, as text")
		Expect(got[5]).To(Equal("none"))
		Expect(shown("adopt")).To(BeFalse())
	})

	It("has no platform part without a platform", func() {
		op.set(status, view(nil, false))
		open("#history tbody td")
		Expect(shown("platform-card")).To(BeFalse())
		Expect(shown("lost")).To(BeFalse())

		op.set(status, view(&reconciler.InstancePlatform{View: "known", ReadAt: readAt, Record: record("cache")}, false))
		open("#platform dd")
		Expect(shown("platform-card")).To(BeTrue(), "the same page shows it once the view has a platform")
	})
})
