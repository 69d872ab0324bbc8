package reconciler_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/run"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("a run's phases", func() {
	It("are each timed in the summary, in the order the run takes them", func() {
		e := newEnv(envOptions{seed: 2})
		s := e.run(report.RunOptions{})
		var names []string
		for _, p := range s.Phases {
			names = append(names, p.Name)
			Expect(p.Seconds).To(BeNumerically(">=", 0), p.Name)
		}
		Expect(names).To(Equal(run.PhaseNames()))
	})
})
