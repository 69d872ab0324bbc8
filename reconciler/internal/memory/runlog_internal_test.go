package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The run log keeps at most maxLoggedItems of the platform's lists, the
// counts whole, and leaves the summary it was given as it is.
func TestLoggableCutsThePlatformLists(t *testing.T) {
	many := make([]report.PlatformInstance, maxLoggedItems+50)
	p := &report.PlatformReport{State: report.PlatformKnown, Counts: map[string]int{report.OrphanDeployment: len(many)},
		OrphanDeployments: many, PlatformOnly: many, Deleted: make([]report.Remediation, maxLoggedItems+1)}
	got := loggable(report.Summary{Platform: p}, maxLoggedItems, MaxErrorText).Platform
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

// runStore keeps the entries it is given, refusing one over the bound as
// Vault's run log does.
type runStore struct{ entries []vault.RunEntry }

func (r *runStore) AppendRun(_ context.Context, e vault.RunEntry) error {
	if len(e.Summary) > vault.MaxRunSummaryBytes {
		return fmt.Errorf("summary of %d bytes: %w", len(e.Summary), vault.ErrTooLarge)
	}
	r.entries = append(r.entries, e)
	return nil
}
func (r *runStore) Runs(context.Context, int) ([]vault.RunEntry, error) { return r.entries, nil }
func (r *runStore) PruneRuns(context.Context, int) (int, error)         { return 0, nil }

// A run of a large outage, every list full of hostile text, is logged
// still (it was refused, and missing from /b/runs), its counts whole and
// its first error kept.
func TestLogRunKeepsARunOfAnyOutage(t *testing.T) {
	hostile := strings.Repeat("<\u202e&", 200)
	q := make([]report.Quarantined, 5000)
	for i := range q {
		q[i] = report.Quarantined{Deployment: fmt.Sprintf("d-%0200d", i), LastError: hostile}
	}
	errs := make([]string, 100)
	for i := range errs {
		errs[i] = "instance x: " + hostile
	}
	settled := make([]report.Settled, 100_000)
	s := report.Summary{RunID: "r1", StartedAt: time.Now(), Errors: errs, ErrorCount: 7000, Quarantined: q, NewlyQuarantined: q,
		Released: q, Settled: settled, LowConfidence: make([]report.LowConfidence, 5000)}
	store := &runStore{}
	if err := LogRun(context.Background(), store, s, 50); err != nil {
		t.Fatalf("not logged: %v", err)
	}
	var got report.Summary
	if err := json.Unmarshal(store.entries[0].Summary, &got); err != nil {
		t.Fatal(err)
	}
	if got.ErrorCount != 7000 || len(got.Errors) == 0 || !strings.HasPrefix(got.Errors[0], "instance x: ") {
		t.Fatalf("the counts or the first error lost: %d, %v", got.ErrorCount, len(got.Errors))
	}
	if len(got.Settled) > maxLoggedItems || len(got.LowConfidence) > maxLoggedItems {
		t.Fatalf("lists not cut: %d settled, %d low confidence", len(got.Settled), len(got.LowConfidence))
	}
}
