package run

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// orphansFor is an index of orphans for the remediation's specs, at start.
func orphansFor(start time.Time) map[string]*vault.Record {
	ago := func(d time.Duration) string { return start.Add(-d).Format(time.RFC3339) }
	day := 24 * time.Hour
	orphan := func(since time.Duration) *vault.Record {
		return &vault.Record{PlanID: "p", Orphaned: true, OrphanedAt: ago(since)}
	}
	index := map[string]*vault.Record{
		"old": orphan(3 * day), "old2": orphan(3 * day), "older": orphan(5 * day), "fresh": orphan(time.Hour),
		"undated":    {PlanID: "p", Orphaned: true},
		"not-orphan": {PlanID: "p"},
		"operating":  orphan(3 * day), "back": orphan(3 * day), "director-down": orphan(3 * day),
		"retried-lately": orphan(3 * day), "retried-long-ago": orphan(4 * day), "other-plan": orphan(6 * day),
	}
	index["operating"].LastOperation = &vault.Operation{Type: "update", State: vault.OperationInProgress}
	index["director-down"].Director = "down"
	index["retried-lately"].RemediatedAt = ago(time.Hour)
	index["retried-long-ago"].RemediatedAt = ago(2 * day)
	index["other-plan"].PlanID = "q"
	return index
}

// The remediation takes the orphans flagged for min_age and not tried
// within it, oldest orphan first (then by id), at most max_per_run: none
// with a broker operation in progress, whose deployment is listed again,
// whose Director is out of the run, out of the run's scope.
func TestRemediableAreTheOldestOrphansWithinTheRules(t *testing.T) {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	all := []string{"other-plan", "older", "retried-long-ago", "old", "old2"}
	for _, tc := range []struct {
		name   string
		minAge time.Duration
		max    int
		scope  report.Scope
		want   []string
	}{
		{name: "a whole run", minAge: 24 * time.Hour, max: 10, want: all},
		{name: "at most max_per_run", minAge: 24 * time.Hour, max: 2, want: all[:2]},
		{name: "none allowed per run", minAge: 24 * time.Hour, max: 0},
		{name: "no min_age: the fresh and those tried lately too", max: 10,
			want: []string{"other-plan", "older", "retried-long-ago", "old", "old2", "retried-lately", "fresh"}},
		{name: "within the run's scope", minAge: 24 * time.Hour, max: 10, scope: report.Scope{Plan: "p"}, want: all[1:]},
		{name: "an instance's scope", minAge: 24 * time.Hour, max: 10, scope: report.Scope{Instance: "old2"}, want: []string{"old2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := remedy{cfg: config.RemediationConfig{Mode: config.RemediateRedeploy, MinAge: tc.minAge, MaxPerRun: tc.max},
				outOfRun: func(rec *vault.Record) bool { return rec.Director == "down" }, scope: tc.scope,
				index: orphansFor(start), listed: map[string]bool{"p-back": true}, start: start}
			if got := m.remediable(); !slices.Equal(got, tc.want) {
				t.Fatalf("remediable %v, want %v", got, tc.want)
			}
		})
	}
}

// The mode decides what is done: none, nothing (no section); a dry run
// lists what redeploy or purge would do and does nothing; a redeploy goes
// through the orphan's Director's deployer, and without one the orphan's
// error is in the section and the run's errors.
func TestRemediationModes(t *testing.T) {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	director, err := bosh.New(bosh.Options{Name: "a", Address: "https://director.invalid:25555",
		Username: "admin", Password: "admin"}) // never dialled
	if err != nil {
		t.Fatal(err)
	}
	directors, err := fleet.New([]ports.NamedDirector{{Name: "a", Director: director}}) // no Deployer
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		mode    string
		dryRun  bool
		listed  bool // a section
		failing bool // each one's error: no Director to deploy with
	}{
		{name: "no mode"},
		{name: "none", mode: config.RemediateNone},
		{name: "redeploy, a dry run", mode: config.RemediateRedeploy, dryRun: true, listed: true},
		{name: "purge, a dry run", mode: config.RemediatePurge, dryRun: true, listed: true},
		{name: "redeploy without a deployer", mode: config.RemediateRedeploy, listed: true, failing: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := slog.New(slog.DiscardHandler)
			ledger := memory.NewLedger(log, report.Summary{})
			m := remedy{cfg: config.RemediationConfig{Mode: tc.mode, MinAge: 24 * time.Hour, MaxPerRun: 2}, directors: directors,
				outOfRun: func(*vault.Record) bool { return false }, index: orphansFor(start), start: start, dryRun: tc.dryRun,
				ledger: ledger, log: log} // no Vault, no history: either would panic if asked
			m.remediate(context.Background())
			sum := ledger.Summary()
			if (sum.Remediated != nil) != tc.listed {
				t.Fatalf("section %v, want one: %v", sum.Remediated, tc.listed)
			}
			var got []string
			for _, rem := range sum.Remediated {
				got = append(got, rem.InstanceID)
				if rem.Action != tc.mode || rem.Deployment != m.index[rem.InstanceID].Deployment(rem.InstanceID) || rem.TaskID != 0 || rem.Backup != "" ||
					(rem.Error != "") != tc.failing {
					t.Fatalf("remediation %+v", rem)
				}
				if tc.failing && !strings.Contains(rem.Error, "no director to deploy with") {
					t.Fatalf("error %q", rem.Error)
				}
			}
			if want := []string{"other-plan", "older"}; tc.listed && !slices.Equal(got, want) {
				t.Fatalf("remediated %v, want %v", got, want)
			}
			if failed := map[bool]int{true: 2}[tc.failing]; sum.Failed != failed || sum.ErrorCount != failed {
				t.Fatalf("%d failed, %d errors, want %d", sum.Failed, sum.ErrorCount, failed)
			}
		})
	}
}
