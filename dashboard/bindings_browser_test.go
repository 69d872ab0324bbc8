package dashboard_test

import (
	"context"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("the dashboard's bindings card, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	// The platform's and Vault's content, hostile: a binding id that is
	// markup (whose onerror would run were it made an element), a reason
	// that is a script, a binding id that a right-to-left override reorders.
	const (
		imgBinding   = `<img src=x onerror=alert(1)>`
		scriptReason = `<script>window.pwned=1</script>`
		spoofBinding = "bind-\u202eexe"
		meaning      = "A lost binding's credentials are gone from Vault and could not be put back from a backup or the deployed manifest. " +
			"Nothing is generated again: the app bound to it keeps what it has; unbind and bind again to give it new credentials."
	)

	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
	})

	// status is the reconciler's status with the bindings' report b (nil:
	// the reconciler runs without the broker).
	status := func(b *report.BindingsReport) reconciler.Status {
		s := idle()
		s.Bindings = b
		return s
	}
	view := healthyView()
	// restored adds a binding the run put back to b. The reconciler does not
	// name the report's RestoredBinding: a struct of its very fields (and
	// tags) is assignable to it, so the compiler still checks the shape.
	restored := func(b *report.BindingsReport, instance, binding, from string) {
		b.Restored = append(b.Restored, struct {
			InstanceID string `json:"instance_id"`
			BindingID  string `json:"binding_id"`
			From       string `json:"from"`
		}{instance, binding, from})
	}
	// checked is a run that checked 57 bindings of 12 instances, put two
	// back and unlisted one, with the lost bindings lost (total in all).
	checked := func(total int, lost ...report.LostBinding) *report.BindingsReport {
		b := &report.BindingsReport{Instances: 12, Bindings: 57, Unlisted: 1, Lost: lost, LostTotal: total}
		restored(b, "a1", "bind-1", "restored from backup 20260511T030000Z")
		restored(b, "b2", imgBinding, "restored from the manifest")
		return b
	}
	lost := []report.LostBinding{
		{InstanceID: "c3", BindingID: imgBinding, Reason: "no backup holds it (and its plan declares no user per binding in the manifest)"},
		{InstanceID: "d4", BindingID: spoofBinding, Reason: scriptReason},
	}
	// js is the value of a script's expression on the page.
	js := func(expr string, v any) {
		GinkgoHelper()
		Expect(chromedp.Run(browser, chromedp.Evaluate(expr, v))).To(Succeed())
	}

	It("shows what the last run checked, the bindings it put back and, as a warning, every binding lost so far, as text", func() {
		op.set(status(checked(2, lost...)), view)
		_, injected := rendered(browser, base+"/dashboard", "#bindings-lost tbody td a", "#bindings-card")
		Expect(injected).To(BeFalse(), "no element made of a binding id or a reason, no script run")
		var elements int
		js(`document.querySelectorAll("#bindings-card img, #bindings-card script").length`, &elements)
		Expect(elements).To(BeZero())

		Expect(tableCells(browser, "bindings-lost")).To(Equal([][]string{
			{"c3", imgBinding, "no backup holds it (and its plan declares no user per binding in the manifest)"},
			{"d4", `bind-\u202Eexe`, scriptReason},
		}), "the binding ids and reasons as text, the hidden character escaped")
		Expect(tableCells(browser, "bindings-restored")).To(Equal([][]string{
			{"a1", "bind-1", "restored from backup 20260511T030000Z"},
			{"b2", imgBinding, "restored from the manifest"},
		}))
		var hrefs []string
		js(`[...document.querySelectorAll("#bindings-lost a, #bindings-restored a")].map((a) => a.getAttribute("href"))`, &hrefs)
		Expect(hrefs).To(Equal([]string{"/dashboard/instances/c3", "/dashboard/instances/d4",
			"/dashboard/instances/a1", "/dashboard/instances/b2"}), "each instance's view")

		got := textsOf(browser, "#bindings-checked", "#bindings-lost-count", "#bindings-lost-text", "#bindings-lost-more",
			"#bindings-restored-count", "#bindings-card")
		Expect(got[0]).To(Equal("The last run checked 57 bindings of 12 instances (a share of the fleet each run, in turn); " +
			"1 unbound binding unlisted."))
		Expect(got[1]).To(Equal("(2)"))
		Expect(got[2]).To(Equal("2 bindings lost. " + meaning))
		Expect(got[3]).To(BeEmpty(), "every lost binding is listed")
		Expect(got[4]).To(Equal("(2)"))
		Expect(got[5]).NotTo(ContainSubstring("\u202e"))

		var card, text string
		js(`document.getElementById("bindings-card").className`, &card)
		js(`document.getElementById("bindings-lost-text").className`, &text)
		Expect(card).To(Equal("card wide warn"), "the card stands out while a binding is lost")
		Expect(text).To(Equal("warning"))
	})

	It("says when it lists only the first of the lost bindings", func() {
		op.set(status(checked(250, lost...)), view)
		got, _ := rendered(browser, base+"/dashboard", "#bindings-lost tbody td a", "#bindings-lost-more")
		Expect(got).To(Equal("The first 2 of 250, by instance and binding id."))
		Expect(textsOf(browser, "#bindings-lost-count", "#bindings-lost-text")).To(Equal([]string{"(250)", "250 bindings lost. " + meaning}))
	})

	It("says plainly when nothing is lost, and when nothing was put back", func() {
		op.set(status(&report.BindingsReport{Instances: 1, Bindings: 1, Lost: []report.LostBinding{}}), view)
		got, _ := rendered(browser, base+"/dashboard", "#bindings-restored td.empty", "#bindings-lost-text")
		Expect(got).To(Equal("Nothing lost: every binding checked so far has its credentials in Vault."))
		Expect(textsOf(browser, "#bindings-checked", "#bindings-lost-count", "#bindings-lost-more", "#bindings-restored-count")).To(Equal([]string{
			"The last run checked 1 binding of 1 instance (a share of the fleet each run, in turn).", "(0)", "", "(0)"}))
		Expect(tableCells(browser, "bindings-restored")).To(Equal([][]string{{"none put back by the last run"}}))
		var lostShown bool
		var card, text string
		js(`!document.getElementById("bindings-lost").hidden`, &lostShown)
		js(`document.getElementById("bindings-card").className`, &card)
		js(`document.getElementById("bindings-lost-text").className`, &text)
		Expect(lostShown).To(BeFalse(), "no table of nothing")
		Expect(card).To(Equal("card wide"), "no warning")
		Expect(text).To(BeEmpty())
	})

	It("has no bindings card without the broker", func() {
		op.set(status(nil), view)
		_, _ = rendered(browser, base+"/dashboard", "#orphans td.empty", "#orphans")
		var shown bool
		js(`!document.getElementById("bindings-card").hidden`, &shown)
		Expect(shown).To(BeFalse())

		op.set(status(checked(0)), view)
		_, _ = rendered(browser, base+"/dashboard", "#bindings-card", "#bindings-card")
		js(`!document.getElementById("bindings-card").hidden`, &shown)
		Expect(shown).To(BeTrue(), "the same page shows it once the status has the bindings")
	})
})
