// Package testbrowser finds and starts (Start) the headless browser the
// Ginkgo suites drive: Debian's Chromium (CHROMIUM overrides it). Without
// one a spec is skipped with the reason on a developer's machine and fails
// under CI=true, where .ci/run installs it.
package testbrowser

import (
	"context"
	"os"
	"os/exec"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/onsi/ginkgo/v2"

	"github.com/blacksmith-reconciler/blacksmith/internal/testvault"
)

// ChromiumPath is the Chromium binary to drive; it skips or fails the spec
// when there is none.
func ChromiumPath() string {
	ginkgo.GinkgoHelper()
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path, _ = exec.LookPath("chromium")
	}
	if path == "" {
		if testvault.InCI() {
			ginkgo.Fail("no chromium: .ci/run installs Debian's chromium")
		}
		ginkgo.Skip("no chromium (apt-get install chromium)")
	}
	return path
}

// Start starts a headless Chromium with a profile of its own (1280x1000,
// no sandbox, no GPU, no background networking) and returns its context;
// the browser stops and its profile goes when the spec's cleanup runs.
func Start() context.Context {
	ginkgo.GinkgoHelper()
	path := ChromiumPath()
	// Not GinkgoT().TempDir(): Chromium's helper processes may still write
	// to the profile for a moment after the browser is gone; its removal is
	// retried and never fails the spec.
	profile, err := os.MkdirTemp("", "blacksmith-chromium-")
	if err != nil {
		ginkgo.Fail("a profile for chromium: " + err.Error())
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 1000))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ginkgo.DeferCleanup(func() {
		cancel()
		cancelAlloc()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		deadline := time.After(2 * time.Second)
		for os.RemoveAll(profile) != nil {
			select {
			case <-tick.C:
			case <-deadline:
				return
			}
		}
	})
	return ctx
}
