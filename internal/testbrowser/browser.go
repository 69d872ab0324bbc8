// Package testbrowser finds the headless browser the Ginkgo suites drive:
// Debian's Chromium (CHROMIUM overrides it). Without one a spec is skipped
// with the reason on a developer's machine and fails under CI=true, where
// .ci/run installs it.
package testbrowser

import (
	"os"
	"os/exec"

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
