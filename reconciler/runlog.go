package reconciler

import (
	"context"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// runLog is the run log in Vault as the Manager keeps it: each finished run
// appended (and the log pruned to Config.RunLog), the newest one read back
// to follow the leader or to remember the last run after a restart.
type runLog struct {
	store memory.RunLogStore
	keep  int
	fence func() error // nil: no HA; else an error once this daemon lost the lease
	log   *slog.Logger
}

// append appends a finished run (not a dry run) and prunes the log; a
// failure is logged only. A daemon that lost the lease writes nothing.
func (l runLog) append(s report.Summary) {
	if l.fence != nil && l.fence() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := memory.LogRun(ctx, l.store, s, l.keep); err != nil {
		l.log.Warn("could not record the run in the run log", "run", s.RunID, "dry_run", s.DryRun, "error", err)
	}
}

// newest is the newest run of the log; false when there is none or it
// could not be read (logged).
func (l runLog) newest(ctx context.Context) (report.Summary, bool) {
	runs, err := memory.Runs(ctx, l.store, 1)
	if err != nil {
		l.log.Warn("could not read the run log (entries that could be read are used)", "error", err)
	}
	if len(runs) == 0 {
		return report.Summary{}, false
	}
	return runs[0], true
}
