package memory

import (
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
)

// The run log keeps at most maxLoggedItems of the platform's lists, the
// counts whole, and leaves the summary it was given as it is.
func TestLoggableCutsThePlatformLists(t *testing.T) {
	many := make([]report.PlatformInstance, maxLoggedItems+50)
	p := &report.PlatformReport{State: report.PlatformKnown, Counts: map[string]int{report.OrphanDeployment: len(many)},
		OrphanDeployments: many, PlatformOnly: many, Deleted: make([]report.Remediation, maxLoggedItems+1)}
	got := loggable(report.Summary{Platform: p}).Platform
	if len(got.OrphanDeployments) != maxLoggedItems || len(got.PlatformOnly) != maxLoggedItems || len(got.Deleted) != maxLoggedItems {
		t.Fatalf("lists not cut: %d, %d, %d", len(got.OrphanDeployments), len(got.PlatformOnly), len(got.Deleted))
	}
	if got.Counts[report.OrphanDeployment] != len(many) {
		t.Fatalf("count changed: %d", got.Counts[report.OrphanDeployment])
	}
	if len(p.OrphanDeployments) != len(many) {
		t.Fatalf("the summary given was changed: %d", len(p.OrphanDeployments))
	}
}
