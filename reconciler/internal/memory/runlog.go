package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// maxLoggedItems bounds each list of a summary kept in the run log.
const maxLoggedItems = 100

// RunLogStore keeps the run log in Vault; *vault.RunLog has it.
type RunLogStore interface {
	// AppendRun adds a run to the run log.
	AppendRun(ctx context.Context, e vault.RunEntry) error
	// Runs lists the newest runs first, at most limit (0: all).
	Runs(ctx context.Context, limit int) ([]vault.RunEntry, error)
	// PruneRuns keeps the newest keep runs.
	PruneRuns(ctx context.Context, keep int) (int, error)
}

// LogRun appends a finished run to the run log and prunes the log to its
// newest keep runs. Each list of the summary is cut to 100 items and each
// error to 1 KiB (the counts stay whole), the plan not kept; a summary
// still over vault.MaxRunSummaryBytes is cut to 10 items and 256 bytes,
// then to none, so that every run is logged.
func LogRun(ctx context.Context, store RunLogStore, s report.Summary, keep int) error {
	var raw []byte
	var err error
	for _, b := range []struct{ items, text int }{{maxLoggedItems, MaxErrorText}, {10, 256}, {0, 0}} {
		raw, err = json.Marshal(loggable(s, b.items, b.text))
		if err != nil || len(raw) <= vault.MaxRunSummaryBytes {
			break
		}
	}
	if err == nil {
		err = store.AppendRun(ctx, vault.RunEntry{ID: s.RunID, StartedAt: s.StartedAt, Summary: raw})
	}
	if err == nil {
		_, err = store.PruneRuns(ctx, keep)
	}
	return err
}

// loggable is s with its lists cut to n items each and its errors to text
// bytes (the counts stay whole), without the plan.
func loggable(s report.Summary, n, text int) report.Summary {
	s.Conflicts, s.LowConfidence, s.Remediated = cutList(s.Conflicts, n), cutList(s.LowConfidence, n), cutList(s.Remediated, n)
	s.Quarantined, s.NewlyQuarantined, s.Released = cutList(s.Quarantined, n), cutList(s.NewlyQuarantined, n), cutList(s.Released, n)
	s.Settled = cutList(s.Settled, n)
	s.Plan = nil
	if p := s.Platform; p != nil {
		cut := *p
		cut.OrphanDeployments, cut.PlatformOnly, cut.Deleted = cutList(p.OrphanDeployments, n), cutList(p.PlatformOnly, n), cutList(p.Deleted, n)
		cut.Stopped, cut.Started = cutList(p.Stopped, n), cutList(p.Started, n)
		s.Platform = &cut
	}
	if b := s.Bindings; b != nil {
		cut := *b
		cut.Restored, cut.Lost = cutList(b.Restored, n), cutList(b.Lost, n)
		s.Bindings = &cut
	}
	if o := s.Outdated; o != nil {
		cut := *o
		cut.Instances = cutList(o.Instances, n)
		s.Outdated = &cut
	}
	errs := make([]string, 0, min(len(s.Errors), max(n, 1)))
	for _, e := range cutList(s.Errors, max(n, 1)) { // the first error stays: it says why the run failed
		errs = append(errs, report.Truncate(e, max(text, 256)))
	}
	s.Errors = errs
	return s
}

func cutList[T any](l []T, n int) []T {
	if len(l) > n {
		return l[:n:n]
	}
	return l
}

// Runs returns the newest runs of the run log (at most limit, 0: all), with
// their durations; an entry that cannot be decoded is left out and named
// in the error, beside the others.
func Runs(ctx context.Context, store RunLogStore, limit int) ([]report.Summary, error) {
	entries, err := store.Runs(ctx, limit)
	out := make([]report.Summary, 0, len(entries))
	for _, e := range entries {
		var s report.Summary
		if uerr := json.Unmarshal(e.Summary, &s); uerr != nil {
			err = errors.Join(err, fmt.Errorf("run %s: %w", e.ID, uerr))
			continue
		}
		out = append(out, s)
	}
	return out, err
}

// Duration is a logged run's duration (the log keeps it in seconds).
func Duration(s report.Summary) time.Duration {
	return time.Duration(s.DurationSeconds * float64(time.Second))
}

// ConflictKey identifies a conflict across runs: a conflict is recorded in
// the instance's history once, when it appears.
func ConflictKey(c report.Conflict) string {
	return c.InstanceID + "\x00" + c.Loser + "\x00" + c.LoserDirector
}
