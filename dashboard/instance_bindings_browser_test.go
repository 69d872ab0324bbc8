package dashboard_test

import (
	"context"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("the instance page's lost bindings, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	// A binding id that is markup (whose onerror would run were it made an
	// element), and a reason that is.
	const (
		imgBinding = `<img src=x onerror=alert(1)>`
		imgReason  = `could not be written back: <img src=x onerror=alert(1)>`
	)

	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
	})

	status := idle()
	// view is the instance view of a1, recorded, with the lost bindings lost.
	view := func(lost map[string]string) reconciler.InstanceView {
		return reconciler.InstanceView{InstanceID: "a1", Deployment: "redis-small-a1",
			Record: &vault.Record{ServiceID: "redis", PlanID: "redis-small"}, Backups: []string{}, Problems: []string{},
			History: []vault.Event{{Kind: "binding_lost", Actor: "reconciler", Message: "binding bind-2: lost"}},
			Health:  reconciler.InstanceHealth{Status: "healthy"}, LostBindings: lost}
	}
	shown := func(id string) bool {
		GinkgoHelper()
		var visible bool
		Expect(chromedp.Run(browser, chromedp.Evaluate(`!document.getElementById("`+id+`").hidden`, &visible))).To(Succeed())
		return visible
	}

	It("lists each lost binding with why, as a warning, as text", func() {
		op.set(status, view(map[string]string{
			"bind-2":   "no backup holds it (and its plan declares no user per binding in the manifest)",
			imgBinding: imgReason,
		}))
		_, injected := rendered(browser, base+"/dashboard/instances/a1", "#lost-bindings-list tbody td", "main")
		Expect(injected).To(BeFalse(), "no element made of a binding id or a reason, no script run")
		var elements int
		var rows [][]string
		var head, text, class string
		Expect(chromedp.Run(browser,
			chromedp.Evaluate(`document.querySelectorAll("#lost-bindings img, #lost-bindings script").length`, &elements),
			chromedp.Evaluate(`[...document.querySelectorAll("#lost-bindings-list tbody tr")].map((r) => [...r.cells].map((c) => c.textContent))`, &rows),
			chromedp.TextContent("#lost-bindings h2", &head, chromedp.ByQuery),
			chromedp.TextContent("#lost-bindings-text", &text, chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById("lost-bindings").className`, &class))).To(Succeed())
		Expect(elements).To(BeZero())
		Expect(rows).To(Equal([][]string{
			{imgBinding, imgReason},
			{"bind-2", "no backup holds it (and its plan declares no user per binding in the manifest)"},
		}), "by binding id, as text")
		Expect(head).To(Equal("Lost bindings (2)"))
		Expect(text).To(Equal("A lost binding's credentials are gone from Vault and could not be put back from a backup or the deployed manifest. " +
			"Nothing is generated again: the app bound to it keeps what it has; unbind and bind again to give it new credentials."))
		Expect(class).To(ContainSubstring("warn"))
		Expect(shown("lost")).To(BeFalse(), "the instance itself is not lost")
	})

	It("has no lost bindings section when none is lost", func() {
		op.set(status, view(nil))
		_, _ = rendered(browser, base+"/dashboard/instances/a1", "#history tbody td", "main")
		Expect(shown("lost-bindings")).To(BeFalse())

		op.set(status, view(map[string]string{"bind-2": "no backup holds it"}))
		_, _ = rendered(browser, base+"/dashboard/instances/a1", "#lost-bindings-list tbody td", "main")
		Expect(shown("lost-bindings")).To(BeTrue(), "the same page shows it once a binding is lost")
	})
})
