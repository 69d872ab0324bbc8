// Package manifests_test checks the BOSH release in release/, the example
// deployment (blacksmith.yml, operations/, example-vars/) and the helper
// scripts in ../ci/release without a bosh CLI or a Director: the job templates
// are rendered by ci/release/render-templates.rb (Ruby's ERB, as the Director
// renders them) and their output is fed to the real blacksmith binary.
package manifests_test

import (
	"os"
	"os/exec"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"gopkg.in/yaml.v3"
)

func TestManifests(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "manifests")
}

// Paths, relative to this folder.
const (
	releaseDir = "release"
	jobDir     = "release/jobs/blacksmith"
	catalogDir = "catalog" // the sample catalog
	renderer   = "../ci/release/render-templates.rb"
	syncSrc    = "../ci/release/sync-src.sh"
)

// blacksmithBin is the daemon, built once for check-config.
var blacksmithBin string

var _ = BeforeSuite(func() {
	var err error
	blacksmithBin, err = gexec.Build("github.com/blacksmith-reconciler/blacksmith/cmd/blacksmith")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(gexec.CleanupBuildArtifacts)
})

// readYAML decodes the YAML file at path into v.
func readYAML(path string, v any) {
	GinkgoHelper()
	data, err := os.ReadFile(path)
	Expect(err).NotTo(HaveOccurred())
	Expect(yaml.Unmarshal(data, v)).To(Succeed(), path)
}

// cleanEnv is the environment of the child processes the specs start: no
// VAULT_*, BOSH_* or GO* variable of the caller's shell reaches them.
func cleanEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + GinkgoT().TempDir()}, extra...)
}

// rubyPath is the ruby that renders the templates. Without one the spec
// fails under CI=true (.ci/run installs Debian's ruby) and is skipped elsewhere.
func rubyPath() string {
	GinkgoHelper()
	path, err := exec.LookPath("ruby")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		Fail("ruby is required to render the BOSH job templates (Debian: apt-get install ruby)")
	}
	Skip("ruby not found: the BOSH job templates are not rendered (under CI=true this fails)")
	return ""
}
