package memory

import (
	"context"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// maxStepBackoff caps the wait between two attempts within a run, whatever
// Config.RetryDelay says.
const maxStepBackoff = 5 * time.Minute

// Policy is the reconciler's one backoff policy, at two time scales: within
// a run, a failed step is tried again Attempts times, waits growing from
// Delay (capped at 5 min, with jitter), and a failed fetch goes to a later
// round after the same waits; across runs, an item that failed in runs in a
// row waits Quarantine.Backoff, doubling per failed run up to
// Quarantine.MaxBackoff (without jitter: the next attempt is a time an
// operator can read).
type Policy struct {
	// Attempts is Config.RetryAttempts: the retries of a step, the later rounds of a fetch.
	Attempts int
	// Delay is Config.RetryDelay: the first wait within a run.
	Delay time.Duration
	// Quarantine is Config.Quarantine: the waits between runs.
	Quarantine config.QuarantineConfig
	// Log hears of each retry.
	Log *slog.Logger
}

// Do runs step with retries (none once ctx has ended); key and value name
// the step in the log.
func (p Policy) Do(ctx context.Context, key string, value any, step func(context.Context) error) error {
	retries := p.Attempts
	if ctx.Err() != nil {
		retries = 0
	}
	return retry.Do(ctx, retries, p.step(), func(attempt int, err error, wait time.Duration) {
		if p.Log == nil {
			return
		}
		p.Log.Warn("reconciler step failed, retrying", key, value, "attempt", attempt, "retry_in", wait, "error", err)
	}, step)
}

// Round is the wait before round n+1 of a run (n from 1).
func (p Policy) Round(n int) time.Duration { return p.step().Delay(n) }

// step is the backoff within a run.
func (p Policy) step() retry.Backoff {
	return retry.Backoff{Base: p.Delay, Limit: max(maxStepBackoff, p.Delay)}
}

// QuarantineWait is the wait after the n-th failed run in a row.
func (p Policy) QuarantineWait(n int) time.Duration {
	return retry.Backoff{Base: p.Quarantine.Backoff, Limit: p.Quarantine.MaxBackoff}.Ceiling(n)
}
