package report

import "fmt"

// Results of a run, as Summary.Result says them.
const (
	ResultSuccess = "success"
	ResultPartial = "partial"
	ResultFailure = "failure"
)

// Outcome is a finished run's result and what keeps it from being
// converged, one line each: a run that did not complete or met an error
// failed; one that skipped quarantined items is partial; any write (or, in
// a dry run, a plan with changes), unexplained deployment, conflict or
// operation still stuck keeps it from being converged.
func Outcome(s Summary) (result string, blockers []string) {
	blockers = []string{}
	add := func(n int, format string) {
		if n > 0 {
			blockers = append(blockers, fmt.Sprintf(format, n))
		}
	}
	if s.Aborted != nil {
		blockers = append(blockers, "the run did not complete: "+s.Aborted.Error())
	}
	add(s.ErrorCount, "%d errors")
	add(len(s.Quarantined), "%d quarantined items skipped")
	add(len(s.NewlyQuarantined), "%d items newly quarantined")
	add(s.Unmatched-s.Foreign-len(s.Conflicts)-len(s.LowConfidence), "%d deployments unmatched")
	add(len(s.LowConfidence), "%d matches below reconciler.min_confidence")
	stillStuck := 0
	for _, st := range s.Settled {
		if st.State == "in progress" {
			stillStuck++
		}
	}
	add(stillStuck, "%d broker operations in progress for longer than reconciler.stuck_operation_after")
	add(len(s.Conflicts), "%d deployments in conflict for an instance")
	if s.Plan != nil {
		if !s.Plan.Empty() {
			blockers = append(blockers, "the plan has changes to write")
		}
	} else {
		add(s.Writes, "%d writes made")
	}
	switch {
	case s.ErrorCount > 0 || s.Aborted != nil:
		return ResultFailure, blockers
	case len(s.Quarantined) > 0:
		return ResultPartial, blockers
	}
	return ResultSuccess, blockers
}
