package dashboard_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Instance is the stand-in's instance view (operator.InstanceReader).
func (o *operator) Instance(_ context.Context, _ string) (*reconciler.InstanceView, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	v := o.instance
	return &v, nil
}

// Runs is the stand-in's run log (operator.Instances).
func (o *operator) Runs(_ context.Context, _ int) ([]report.Summary, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.runs), nil
}

// Rollback records the restore asked for and answers as the reconciler
// does (operator.Instances), or fails with restoreErr.
func (o *operator) Rollback(_ context.Context, id, backupID string, redeploy bool) (reconciler.RollbackResult, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.restores = append(o.restores, fmt.Sprintf("%s %s %t", id, backupID, redeploy))
	if o.restoreErr != nil {
		return reconciler.RollbackResult{}, o.restoreErr
	}
	return reconciler.RollbackResult{InstanceID: id, Backup: backupID, SafetyBackup: "1795790000", Redeployed: redeploy,
		Note:     "the next run records what the deployment runs",
		Bindings: []vault.BindingRestore{{BindingID: "bind-1", Outcome: "kept"}}}, nil
}

// Adopt is not used by these specs (operator.Instances).
func (o *operator) Adopt(context.Context, string, string) (*vault.Record, error) {
	return nil, fmt.Errorf("not in these specs")
}

// restored are the restores the stand-in was asked for.
func (o *operator) restored() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.restores)
}

var _ = Describe("the instance page's backups and their restore, in a real browser", func() {
	var (
		op      *operator
		base    string
		browser context.Context
	)
	taken := time.Date(2026, 11, 27, 14, 5, 0, 0, time.UTC)
	newest := strconv.FormatInt(taken.Unix(), 10)                   // 1795788300
	older := strconv.FormatInt(taken.Add(-24*time.Hour).Unix(), 10) // 1795701900

	view := func() reconciler.InstanceView {
		v := healthyView()
		v.InstanceID = "a1"
		v.Record = &vault.Record{ServiceID: "redis", PlanID: "redis-small"}
		v.Backups = []string{newest, older, "not-a-time"}
		v.BackupContents = []reconciler.InstanceBackup{
			{ID: newest, TakenAt: taken.Format(time.RFC3339), Holds: []string{"record", "metadata", "manifest"}, Secrets: 3, Bindings: 2},
			{ID: older, Holds: []string{}, Problem: "reading backup: <b>corrupt</b>"},
		}
		return v
	}
	BeforeEach(func() {
		op = &operator{}
		base = op.serve()
		browser = chromium()
	})
	enabled := func(id string) chromedp.Action {
		return chromedp.Poll(`!document.getElementById("`+id+`").disabled`, nil, chromedp.WithPollingTimeout(10*time.Second))
	}

	for _, width := range []int64{1400, 390} {
		It(fmt.Sprintf("shows each backup as a date with what it holds, and restores one only once confirmed (%d px)", width), func() {
			Expect(chromedp.Run(browser, chromedp.EmulateViewport(width, 900))).To(Succeed())
			op.set(idle(), view())
			_, injected := rendered(browser, base+"/dashboard/instances/a1", "#backups tbody td button", "#backups")
			Expect(injected).To(BeFalse(), "no element made of a backup's content")
			cells := tableCells(browser, "backups")
			Expect(cells).To(HaveLen(3))
			Expect(cells[0][0]).To(And(ContainSubstring("2026"), HaveSuffix(" ("+newest+")")), "a date, then the id")
			Expect(cells[0][0]).NotTo(HavePrefix(newest), "not a raw Unix timestamp")
			Expect(cells[0][1]).To(Equal("record, metadata, manifest, 3 secrets (2 bindings' credentials)"))
			Expect(cells[1][0]).To(And(ContainSubstring("2026"), HaveSuffix(" ("+older+")")), "a date from the id when the backup does not say")
			Expect(cells[1][1]).To(Equal("could not be read: reading backup: <b>corrupt</b>"), "as text")
			Expect(cells[2][:2]).To(Equal([]string{"not-a-time", "not read (only the newest 20 are)"}))
			var visible []string
			Expect(chromedp.Run(browser, chromedp.Evaluate(`[...document.querySelectorAll("#backups thead th")]
				.filter((c) => getComputedStyle(c).display !== "none").map((c) => c.textContent)`, &visible))).To(Succeed())
			Expect(visible).To(Equal([]string{"taken", "holds", "restore"}), "every column, on a narrow screen too")

			By("asking first, and nothing restored on Cancel")
			var question string
			Expect(chromedp.Run(browser, chromedp.Click("#backups tbody tr:first-child button", chromedp.ByQuery),
				chromedp.WaitVisible("#restore-confirm", chromedp.ByQuery),
				chromedp.Text("#restore-question", &question, chromedp.ByQuery))).To(Succeed())
			Expect(question).To(And(HavePrefix("Restore instance a1 from the backup taken "), ContainSubstring("("+newest+")"),
				ContainSubstring("record, metadata, manifest, 3 secrets"), ContainSubstring("backed up first")))
			Expect(chromedp.Run(browser, chromedp.Click("#restore-no", chromedp.ByQuery),
				chromedp.WaitNotVisible("#restore-confirm", chromedp.ByQuery))).To(Succeed())
			Expect(op.restored()).To(BeEmpty(), "Cancel restores nothing")

			By("restoring once confirmed, through the operator's restore")
			var done string
			Expect(chromedp.Run(browser, chromedp.Click("#backups tbody tr:nth-child(2) button", chromedp.ByQuery),
				chromedp.WaitVisible("#restore-confirm", chromedp.ByQuery),
				chromedp.Click("#restore-redeploy", chromedp.ByQuery),
				chromedp.Click("#restore-yes", chromedp.ByQuery),
				chromedp.WaitVisible("#restore-done", chromedp.ByQuery),
				chromedp.Text("#restore-done", &done, chromedp.ByQuery))).To(Succeed())
			Expect(op.restored()).To(Equal([]string{"a1 " + older + " true"}), "POST /b/instances/a1/restore?backup=…&redeploy=true, past the cross-origin protection")
			Expect(done).To(And(ContainSubstring("Restored from backup "+older), ContainSubstring("The state before is in backup 1795790000"),
				ContainSubstring("bind-1: kept")))
			var confirmShown bool
			Expect(chromedp.Run(browser, chromedp.Evaluate(`!document.getElementById("restore-confirm").hidden`, &confirmShown))).To(Succeed())
			Expect(confirmShown).To(BeFalse())

			By("saying why a restore was refused")
			op.mu.Lock()
			op.restoreErr = fmt.Errorf("%w: <img src=x id=pwned>", reconciler.ErrBusy)
			op.mu.Unlock()
			var refused string
			Expect(chromedp.Run(browser, enabled("restore-yes"), chromedp.Click("#backups tbody tr:first-child button", chromedp.ByQuery),
				chromedp.WaitVisible("#restore-confirm", chromedp.ByQuery), chromedp.Click("#restore-yes", chromedp.ByQuery),
				chromedp.WaitVisible("#restore-error", chromedp.ByQuery), chromedp.Text("#restore-error", &refused, chromedp.ByQuery))).To(Succeed())
			Expect(refused).To(Equal("Restore: rolling back instance a1: an operation is in progress on the instance: <img src=x id=pwned>"))
			Expect(op.restored()).To(HaveLen(2))
			var pwned int
			Expect(chromedp.Run(browser, chromedp.Evaluate(`document.querySelectorAll("#pwned").length`, &pwned))).To(Succeed())
			Expect(pwned).To(BeZero())
		})
	}

	It("shows a viewer no restore button", func() {
		op.role = "viewer"
		op.set(idle(), view())
		_, _ = rendered(browser, base+"/dashboard/instances/a1", "#backups tbody td", "#backups")
		var shown int
		Expect(chromedp.Run(browser,
			chromedp.Poll(`document.body.dataset.role === "viewer"`, nil, chromedp.WithPollingTimeout(10*time.Second)), chromedp.Evaluate(
				`[...document.querySelectorAll("#backups button, #restore-yes")].filter((b) => b.offsetParent !== null).length`, &shown))).To(Succeed())
		Expect(shown).To(BeZero())
	})
})
