package dashboard_test

import (
	"context"
	"fmt"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// What an operator reads first: which deployments are the broker's
// problem and which are someone else's (the backups: restore_browser_test.go).
var _ = Describe("the dashboard's other deployments, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
	})

	for _, width := range []int64{1400, 390} {
		It(fmt.Sprintf("lists the deployments that are not the broker's apart from the unmatched ones that are (%d px)", width), func() {
			Expect(chromedp.Run(browser, chromedp.EmulateViewport(width, 900))).To(Succeed())
			st := idle()
			st.Unmatched = []report.Unmatched{
				{Deployment: "concourse", Reason: "name: no trailing instance UUID; metadata: no properties.blacksmith", Foreign: true},
				{Deployment: "nosuch-plan-0b6f1c3e-3c5e-4e0a-9a4f-1d2c3b4a5e6f", Reason: `name: "nosuch-plan" is not a plan id of the catalog`},
			}
			op.set(st, healthyView())
			_, injected := rendered(browser, base+"/dashboard", "#foreign tbody td", "#foreign")
			Expect(injected).To(BeFalse())
			Expect(tableCells(browser, "unmatched")).To(Equal([][]string{
				{"nosuch-plan-0b6f1c3e-3c5e-4e0a-9a4f-1d2c3b4a5e6f", `name: "nosuch-plan" is not a plan id of the catalog`}}))
			Expect(tableCells(browser, "foreign")).To(Equal([][]string{
				{"concourse", "name: no trailing instance UUID; metadata: no properties.blacksmith"}}))
			Expect(textsOf(browser, "#unmatched-count", "#foreign-count")).To(Equal([]string{"(1)", "(1)"}))
		})
	}
})
