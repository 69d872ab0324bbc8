package main_test

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

var binary string

func TestBoshDirectorSim(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "cmd/bosh-director-sim suite")
}

var _ = BeforeSuite(func() {
	var err error
	binary, err = gexec.Build("github.com/blacksmith-reconciler/blacksmith/cmd/bosh-director-sim")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(gexec.CleanupBuildArtifacts)
})
