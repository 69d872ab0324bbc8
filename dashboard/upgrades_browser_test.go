package dashboard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("the dashboard's fleet upgrades, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	// A Director's content, hostile: a deployment name that is markup, a
	// reason that a right-to-left override reorders.
	const (
		imgDeployment = `redis-<img src=x id=pwned>`
		spoofReason   = "task 12 failed: \u202etxt.exe"
	)

	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
		op.set(idle(),
			reconciler.InstanceView{Backups: []string{}, History: []vault.Event{}, Problems: []string{}})
	})

	// none is the answer of a daemon that made no fleet upgrade since it started.
	none := func() upgradesAnswer {
		GinkgoHelper()
		a := upgradesAnswer{UpgradeStatus: reconciler.UpgradeStatus{Mode: "report",
			Quarantined: []report.UpgradeQuarantined{}}, Problems: []string{}}
		// the journal's entries are of an internal type: made from their JSON
		Expect(json.Unmarshal([]byte(`[]`), &a.InFlight)).To(Succeed())
		return a
	}
	// ended is a fleet upgrade a canary's failure stopped.
	ended := func() *report.UpgradeReport {
		started := time.Date(2026, 5, 11, 3, 0, 0, 0, time.UTC)
		return &report.UpgradeReport{ID: "f1", Trigger: "operator", StartedAt: started, EndedAt: started.Add(3 * time.Minute),
			Rules:   report.UpgradeRules{Canaries: 1, MaxInFlight: 5, MaxFailures: 1, AttemptLimit: 5},
			Stopped: "a canary failed", Counts: map[string]int{"rolled_back": 1, "upgraded": 1, "pending": 1},
			Instances: []report.UpgradeResult{
				{InstanceID: "a1", Deployment: imgDeployment, PlanID: "redis-small", From: "1.0.0", To: "2.0.0", State: "rolled_back",
					Reason: spoofReason, Canary: true, TaskID: 12, RollbackTaskID: 13},
				{InstanceID: "b2", Deployment: "redis-small-b2", PlanID: "redis-small", From: "1.0.0", To: "2.0.0", State: "upgraded", TaskID: 14},
				{InstanceID: "c3", Deployment: "redis-small-c3", PlanID: "redis-small", To: "2.0.0", State: "pending", Reason: "a canary failed"},
			}}
	}

	It("shows the last fleet upgrade, the instances not at their version, the upgrades in flight and the quarantine, as text", func() {
		a := none()
		a.Current, a.InstancesLeftOff = ended(), 997
		a.Quarantined = []report.UpgradeQuarantined{{InstanceID: "a1", Failures: 2, Version: "2.0.0", State: "rolled_back",
			Reason: spoofReason, NextAttempt: time.Now().Add(time.Hour)}}
		Expect(json.Unmarshal([]byte(`[{"instance_id":"d4","deployment":"redis-small-d4<b>","from":"1.0.0","to":"2.0.0","fleet":"f0",
			"started_at":"2026-05-11T02:00:00Z"}]`), &a.InFlight)).To(Succeed())
		op.setUpgrades(a)
		_, injected := rendered(browser, base+"/dashboard", "#upgrade-instances tbody td a", "#upgrades-card")
		Expect(injected).To(BeFalse(), "no element made of the Director's content")

		Expect(tableCells(browser, "upgrade-instances")).To(Equal([][]string{
			{"a1", imgDeployment, "redis-small", "1.0.0 → 2.0.0", "rolled_back", `task 12 failed: \u202Etxt.exe`, "task 12, rollback 13"},
			{"c3", "redis-small-c3", "redis-small", "unknown → 2.0.0", "pending", "a canary failed", ""},
		}), "only those not at their version; the hidden character escaped")
		Expect(tableCells(browser, "upgrade-in-flight")).To(HaveLen(1))
		Expect(tableCells(browser, "upgrade-in-flight")[0][:3]).To(Equal([]string{"d4", "redis-small-d4<b>", "1.0.0 → 2.0.0"}))
		quarantine := tableCells(browser, "upgrade-quarantine")
		Expect(quarantine).To(HaveLen(1))
		Expect(quarantine[0][:5]).To(Equal([]string{"a1", "2", "2.0.0", "rolled_back", `task 12 failed: \u202Etxt.exe`}))
		Expect(quarantine[0][5]).NotTo(BeEmpty(), "the next attempt")

		var facts, mode, more, card string
		Expect(chromedp.Run(browser, chromedp.Text("#upgrade-current", &facts, chromedp.ByQuery),
			chromedp.Text("#upgrade-mode", &mode, chromedp.ByQuery), chromedp.Text("#upgrade-more", &more, chromedp.ByQuery),
			chromedp.TextContent("#upgrades-card", &card, chromedp.ByQuery))).To(Succeed())
		Expect(mode).To(Equal("report"))
		Expect(facts).To(And(ContainSubstring("operator"), ContainSubstring("ended"), ContainSubstring("2026"),
			ContainSubstring("canaries 1 · max_in_flight 5 · max_failures 1 · attempt_limit 5"),
			ContainSubstring("every outdated instance"), ContainSubstring("pending 1 · rolled_back 1 · upgraded 1"),
			ContainSubstring("a canary failed")))
		Expect(more).To(Equal("From the first 3 of 1000 instances; 997 not listed (the counts count them all)."))
		Expect(card).NotTo(ContainSubstring("\u202e"))
	})

	for _, width := range []int64{1400, 390} {
		It(fmt.Sprintf("keeps the state and the reason, and shows a dry run as a dry run (%d px)", width), func() {
			Expect(chromedp.Run(browser, chromedp.EmulateViewport(width, 900))).To(Succeed())
			a := none()
			dry := ended()
			dry.DryRun, dry.Stopped = true, ""
			dry.Instances[0].State, dry.Instances[0].Reason = "would_upgrade", "its plan deploys 2.0.0"
			a.Current = dry
			op.setUpgrades(a)
			_, _ = rendered(browser, base+"/dashboard", "#upgrade-instances tbody td a", "#upgrades-card")
			var shown []string
			Expect(chromedp.Run(browser, chromedp.Evaluate(`[...document.querySelectorAll("#upgrade-instances thead th")]
			.filter((c) => getComputedStyle(c).display !== "none").map((c) => c.textContent)`, &shown))).To(Succeed())
			Expect(shown).To(ContainElements("instance", "state", "reason"), "the reason is what an operator acts on")
			Expect(tableCells(browser, "upgrade-instances")[0][5]).To(Equal("its plan deploys 2.0.0"))
			var state, cls string
			var ok bool
			Expect(chromedp.Run(browser, chromedp.Evaluate(`[...document.querySelectorAll("#upgrade-current .badge")].map((b) => b.textContent).join()`, &state),
				chromedp.AttributeValue("#upgrade-current .badge", "class", &cls, &ok, chromedp.ByQuery))).To(Succeed())
			Expect(state).To(Equal("dry run ended"))
			var facts string
			Expect(chromedp.Run(browser, chromedp.Text("#upgrade-current", &facts, chromedp.ByQuery))).To(Succeed())
			Expect(facts).To(ContainSubstring("f1 (dry run: changes nothing)"))
			Expect(cls).NotTo(ContainSubstring("failure"), "a dry run is not a failure")
			var badges []string
			Expect(chromedp.Run(browser, chromedp.Evaluate(`[...document.querySelectorAll("#upgrade-instances tbody .badge")].map((b) => b.className)`, &badges))).To(Succeed())
			Expect(badges).NotTo(ContainElement(ContainSubstring("failure")), "an instance a dry run would upgrade is not a failure")
		})
	}

	It("says what nothing means: no fleet upgrade, nothing in flight, nothing quarantined", func() {
		op.setUpgrades(none())
		got, _ := rendered(browser, base+"/dashboard", "#upgrade-quarantine td.empty", "#upgrade-instances tbody")
		Expect(got).To(Equal("no fleet upgrade since the daemon started"))
		Expect(tableCells(browser, "upgrade-quarantine")).To(Equal([][]string{{"nothing quarantined"}}))
		Expect(tableCells(browser, "upgrade-in-flight")).To(Equal([][]string{{"no upgrade in flight"}}))
		var visible bool
		Expect(chromedp.Run(browser, chromedp.Evaluate(`!document.getElementById("upgrade-current").hidden`, &visible))).To(Succeed())
		Expect(visible).To(BeFalse(), "no facts of a fleet upgrade")
	})

	// enabled waits until the page has enabled button id again (after the
	// answer to its last POST), as the page has it now: chromedp's own
	// WaitEnabled reads attributes as its DOM events last said.
	enabled := func(id string) chromedp.Action {
		return chromedp.Poll(`!document.getElementById("`+id+`").disabled`, nil, chromedp.WithPollingTimeout(10*time.Second))
	}

	It("posts a fleet upgrade with Upgrade all and a dry run with Dry run, and shows a refusal", func() {
		op.setUpgrades(none())
		_, _ = rendered(browser, base+"/dashboard", "#upgrade-quarantine td.empty", "#upgrade-instances")
		Expect(chromedp.Run(browser, chromedp.Click("#upgrade-all", chromedp.ByQuery))).To(Succeed())
		Eventually(op.posted).Should(Equal([]string{"?"}), "POST /b/upgrades, past the cross-origin protection")
		Expect(chromedp.Run(browser, enabled("upgrade-dry-run"), chromedp.Click("#upgrade-dry-run", chromedp.ByQuery))).To(Succeed())
		Eventually(op.posted).Should(Equal([]string{"?", "?dry_run=true"}))

		op.mu.Lock()
		op.refuse = true
		op.mu.Unlock()
		var shown string
		Expect(chromedp.Run(browser, enabled("upgrade-all"), chromedp.Click("#upgrade-all", chromedp.ByQuery),
			chromedp.WaitVisible("#upgrade-error", chromedp.ByQuery), chromedp.Text("#upgrade-error", &shown, chromedp.ByQuery))).To(Succeed())
		Expect(shown).To(Equal("Upgrade all: cannot start a fleet upgrade: a fleet upgrade is already running"))
	})
})
