package records

import (
	"github.com/blacksmith-reconciler/blacksmith/operation"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// maxDriftError bounds the reason a drift's changes could not be named.
const maxDriftError = 200

// DriftChanges names what changed from the manifest held (before) to the
// one the Director runs (after): operation.Summary of operation.Compare
// (how many changes, the instance groups, the properties by name, the
// releases, stemcells and guarded changes), never a value, so that a
// credential written into a manifest shows nowhere. Two manifests that
// cannot be compared (not YAML, over the bounds) give "diff_error" with why.
func DriftChanges(before, after string) map[string]string {
	changes, err := operation.Compare(before, after)
	if err != nil {
		return map[string]string{"diff_error": report.Truncate(err.Error(), maxDriftError)}
	}
	return operation.Summary(changes)
}
