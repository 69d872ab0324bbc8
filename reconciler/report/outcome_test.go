package report_test

import (
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

var _ = Describe("the outcome of a run", func() {
	DescribeTable("its result and what keeps it from being converged",
		func(s report.Summary, result string, blockers []string) {
			got, why := report.Outcome(s)
			Expect(got).To(Equal(result))
			Expect(why).To(Equal(blockers))
		},
		Entry("nothing written, nothing unexplained", report.Summary{}, report.ResultSuccess, []string{}),
		Entry("writes made: a success, not converged", report.Summary{Writes: 3}, report.ResultSuccess,
			[]string{"3 writes made"}),
		Entry("an error fails it", report.Summary{ErrorCount: 2}, report.ResultFailure, []string{"2 errors"}),
		Entry("a run that did not complete fails, whatever else",
			report.Summary{Aborted: errors.New("listing deployments: refused")}, report.ResultFailure,
			[]string{"the run did not complete: listing deployments: refused"}),
		Entry("quarantined items skipped: partial",
			report.Summary{Quarantined: []report.Quarantined{{Deployment: "d"}}}, report.ResultPartial,
			[]string{"1 quarantined items skipped"}),
		Entry("conflicts and low confidence are unmatched deployments, not counted twice",
			report.Summary{Unmatched: 4, Conflicts: []report.Conflict{{InstanceID: "i"}},
				LowConfidence: []report.LowConfidence{{Deployment: "x"}}}, report.ResultSuccess,
			[]string{"2 deployments unmatched", "1 matches below reconciler.min_confidence",
				"1 deployments in conflict for an instance"}),
		Entry("an operation still stuck", report.Summary{Settled: []report.Settled{{State: "in progress"}, {State: "failed"}}},
			report.ResultSuccess,
			[]string{"1 broker operations in progress for longer than reconciler.stuck_operation_after"}),
		Entry("a dry run is judged by its plan, not its writes",
			report.Summary{Writes: 0, Plan: &report.Plan{Creates: []report.PlanItem{{InstanceID: "i"}}}},
			report.ResultSuccess, []string{"the plan has changes to write"}),
		Entry("a dry run with an empty plan converges", report.Summary{Plan: &report.Plan{}}, report.ResultSuccess, []string{}),
	)
})
