package e2e_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/internal/testbrowser"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// browser starts a headless Chromium that sends the broker's credentials
// with every request (as a browser does once the operator logged in).
func browser() context.Context {
	GinkgoHelper()
	ctx := testbrowser.Start()
	auth := base64.StdEncoding.EncodeToString([]byte(opUser + ":" + opPass))
	Expect(chromedp.Run(ctx, network.Enable(),
		network.SetExtraHTTPHeaders(network.Headers{"Authorization": "Basic " + auth}))).To(Succeed())
	return ctx
}

var _ = Describe("the dashboard, in a real browser", func() {
	It("shows the orphan and the foreign deployments (listed apart), and a run started with Run now finishing", func() {
		ctx := context.Background()
		foreign := "dashboard-foreign-" + strings.ToLower(strings.ReplaceAll(time.Now().Format("150405.000"), ".", ""))
		req, _ := http.NewRequest(http.MethodPut, directorURL+"/_sim/deployments",
			strings.NewReader("name: "+foreign+"\nreleases: [{name: capi, version: '1'}]\n"))
		res, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusNoContent))
		DeferCleanup(func() {
			req, _ := http.NewRequest(http.MethodDelete, directorURL+"/_sim/deployments/"+foreign, nil)
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
			}
		})
		// A name that reads "...exe.txt" once its right-to-left override
		// reorders it, with a zero-width space: shown escaped.
		spoof := foreign + "-\u202etxt.exe\u200b"
		req, _ = http.NewRequest(http.MethodPut, directorURL+"/_sim/deployments",
			strings.NewReader("name: "+strconv.Quote(spoof)+"\nreleases: [{name: capi, version: '1'}]\n"))
		res, err = http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusNoContent))
		DeferCleanup(func() {
			req, _ := http.NewRequest(http.MethodDelete, directorURL+"/_sim/deployments/"+url.PathEscape(spoof), nil)
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
			}
		})
		orphan := "dash-orphan-" + foreign[len(foreign)-6:]
		_, err = store.Update(ctx, map[string]vault.Change{orphan: func(*vault.Record) (*vault.Record, error) {
			return &vault.Record{ServiceID: "redis", PlanID: "redis-small", Created: time.Now().Add(-2 * time.Hour).Unix(),
				OrganizationGUID: "org-dash", Context: map[string]string{"platform": "cloudfoundry", "instance_name": "my-cache",
					"organization_name": "acme", "organization_guid": "org-dash"}}, nil
		}})
		Expect(err).NotTo(HaveOccurred())
		Expect(store.AppendEvent(ctx, orphan, vault.Event{Kind: "provision", Actor: "broker",
			Details: map[string]string{"platform": "cloudfoundry", "user": "u-dash"}})).To(Succeed())
		DeferCleanup(func() { _ = store.Indexes.Remove(ctx, orphan) })

		d := startDaemon("")
		Eventually(func() int {
			code, _ := d.do(http.MethodPost, "/b/reconcile?wait=60s", opUser, opPass)
			return code
		}).WithTimeout(60 * time.Second).WithPolling(200 * time.Millisecond).Should(Equal(http.StatusOK))

		b := browser()
		var orphans, unmatched, state, runs, pageError string
		Expect(chromedp.Run(b,
			chromedp.Navigate(d.url+"/dashboard"),
			chromedp.WaitVisible(`#orphans tbody a`, chromedp.ByQuery),
			chromedp.WaitVisible(`#runs tbody tr`, chromedp.ByQuery),
			chromedp.Text(`#orphans`, &orphans, chromedp.ByQuery),
			chromedp.Text(`#foreign`, &unmatched, chromedp.ByQuery), // nothing about them is the broker's
			chromedp.Text(`#run-state`, &state, chromedp.ByQuery),
			chromedp.Text(`#runs`, &runs, chromedp.ByQuery),
			chromedp.TextContent(`#error`, &pageError, chromedp.ByQuery),
		)).To(Succeed())
		Expect(pageError).To(BeEmpty(), "the page met no error")
		Expect(runs).To(ContainSubstring("success"), "the run log is shown")
		Expect(orphans).To(ContainSubstring(orphan))
		Expect(unmatched).To(ContainSubstring(foreign))
		Expect(unmatched).To(ContainSubstring(foreign+`-\u202Etxt.exe\u200B`), "hidden characters shown escaped")
		Expect(unmatched).NotTo(ContainSubstring("\u202e"))
		Expect(unmatched).NotTo(ContainSubstring("\u200b"))
		Expect(state).To(Equal("idle"))

		runsBefore := runCount(d)
		var lastRunBefore string
		Expect(chromedp.Run(b, chromedp.Text(`#last-run`, &lastRunBefore, chromedp.ByQuery),
			chromedp.Click(`#run-now`, chromedp.ByQuery))).To(Succeed())
		Eventually(func() int { return runCount(d) }).WithTimeout(60*time.Second).Should(BeNumerically(">", runsBefore),
			"the click started a run")
		Eventually(func() string {
			var now, st string
			_ = chromedp.Run(b, chromedp.Text(`#last-run`, &now, chromedp.ByQuery), chromedp.Text(`#run-state`, &st, chromedp.ByQuery))
			if st != "idle" {
				return ""
			}
			return now
		}).WithTimeout(60*time.Second).WithPolling(500*time.Millisecond).ShouldNot(Or(BeEmpty(), Equal(lastRunBefore)),
			"the page shows the new run, finished")

		// The instance page of the orphan, reached from its link.
		var record, history string
		Expect(chromedp.Run(b,
			chromedp.Click(`#orphans tbody a`, chromedp.ByQuery),
			chromedp.WaitVisible(`#history tbody tr`, chromedp.ByQuery),
			chromedp.Text(`#record`, &record, chromedp.ByQuery),
			chromedp.Text(`#history`, &history, chromedp.ByQuery),
		)).To(Succeed())
		Expect(record).To(ContainSubstring("redis-small"))
		Expect(record).To(And(ContainSubstring("my-cache"), ContainSubstring("acme (org-dash)")), "the platform's names")
		Expect(history).To(ContainSubstring("orphaned"))
		Expect(history).To(ContainSubstring("broker for cloudfoundry user u-dash"), "who asked")

		if path := os.Getenv("DASHBOARD_SCREENSHOT"); path != "" { // make the README's picture
			var png []byte
			Expect(chromedp.Run(b, chromedp.Navigate(d.url+"/dashboard"), chromedp.WaitVisible(`#orphans tbody a`, chromedp.ByQuery),
				chromedp.Sleep(time.Second), chromedp.FullScreenshot(&png, 100))).To(Succeed())
			Expect(os.WriteFile(path, png, 0o644)).To(Succeed())
		}
	})

	It("refuses a cross-site POST (CSRF) with the operator's credentials", func() {
		d := startDaemon("")
		req, _ := http.NewRequest(http.MethodPost, d.url+"/b/reconcile", nil)
		req.SetBasicAuth(opUser, opPass)
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		req.Header.Set("Origin", "https://evil.invalid")
		res, err := http.DefaultClient.Do(req)
		Expect(err).NotTo(HaveOccurred())
		res.Body.Close()
		Expect(res.StatusCode).To(Equal(http.StatusForbidden))
	})
})

// runCount is the number of runs in the daemon's run log.
func runCount(d *daemon) int {
	GinkgoHelper()
	code, body := d.get("/b/runs?limit=1000", opUser, opPass)
	Expect(code).To(Equal(http.StatusOK), body)
	return strings.Count(body, `"run_id"`)
}
