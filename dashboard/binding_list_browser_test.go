package dashboard_test

import (
	"context"
	"fmt"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("the instance page's bindings, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	// The platform's and a Director's content, hostile: a binding id that
	// is markup, an operation's description a right-to-left override
	// reorders.
	const (
		imgBinding  = `<img src=x id=pwned>`
		spoofReason = "task 41 failed: \u202etxt.exe"
	)

	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
	})

	view := func(total int, list ...reconciler.InstanceBinding) reconciler.InstanceView {
		v := healthyView()
		v.InstanceID = "a1"
		v.Record = &vault.Record{ServiceID: "redis", PlanID: "redis-small"}
		v.Bindings, v.BindingsTotal = list, total
		return v
	}

	for _, width := range []int64{1400, 390} {
		It(fmt.Sprintf("lists each binding with its state, its app and its last operation, as text (%d px)", width), func() {
			Expect(chromedp.Run(browser, chromedp.EmulateViewport(width, 900))).To(Succeed())
			op.set(idle(), view(140,
				reconciler.InstanceBinding{BindingID: "bind-1", State: "bound", AppGUID: "app-1"},
				reconciler.InstanceBinding{BindingID: imgBinding, State: "bind failed",
					Operation: &reconciler.BindingOperation{Type: "bind", State: "failed", Description: spoofReason, TaskID: 41}},
				reconciler.InstanceBinding{BindingID: "bind-3", State: "lost", Lost: "no backup holds it"},
			))
			_, injected := rendered(browser, base+"/dashboard/instances/a1", "#bindings tbody td .badge", "#bindings")
			Expect(injected).To(BeFalse(), "no element made of a binding id or a description")
			Expect(tableCells(browser, "bindings")).To(Equal([][]string{
				{"bind-1", "bound", "app-1", ""},
				{imgBinding, "bind failed", "none (a service key, or not said)", `bind failed, task 41, task 41 failed: \u202Etxt.exe`},
				{"bind-3", "lost no backup holds it", "none (a service key, or not said)", ""},
			}))
			var classes []string
			var visible []string
			Expect(chromedp.Run(browser,
				chromedp.Evaluate(`[...document.querySelectorAll("#bindings tbody .badge")].map((b) => b.className)`, &classes),
				chromedp.Evaluate(`[...document.querySelectorAll("#bindings thead th")]
					.filter((c) => getComputedStyle(c).display !== "none").map((c) => c.textContent)`, &visible))).To(Succeed())
			Expect(classes).To(Equal([]string{"badge success", "badge failure", "badge failure"}))
			Expect(visible).To(ContainElements("binding", "state"), "the state, on a narrow screen too")
			Expect(textsOf(browser, "#bindings-count", "#bindings-more")).To(Equal([]string{"(140)", "The first 3 of 140, in the order they were made."}))
		})
	}

	It("says when the instance has no binding", func() {
		op.set(idle(), view(0))
		got, _ := rendered(browser, base+"/dashboard/instances/a1", "#bindings td.empty", "#bindings tbody")
		Expect(got).To(Equal("no binding"))
	})
})
