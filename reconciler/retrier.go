package reconciler

import (
	"context"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
)

// maxBackoff caps the wait between two attempts, whatever Config.RetryDelay says.
const maxBackoff = 5 * time.Minute

// retrier is a run's retry policy: every failed step is tried again
// Config.RetryAttempts times, with exponential backoff from
// Config.RetryDelay, and each retry is logged.
type retrier struct {
	attempts int
	delay    time.Duration
	log      *slog.Logger
}

// do runs step with retries (none once ctx has ended); key and value name
// the step in the log.
func (rt retrier) do(ctx context.Context, key string, value any, step func(context.Context) error) error {
	return retry.Do(ctx, rt.retries(ctx), rt.backoff(), rt.logRetry(key, value), step)
}

// retries is Config.RetryAttempts, or none once ctx has ended.
func (rt retrier) retries(ctx context.Context) int {
	if ctx.Err() != nil {
		return 0
	}
	return rt.attempts
}

// backoff starts at Config.RetryDelay.
func (rt retrier) backoff() retry.Backoff {
	return retry.Backoff{Base: rt.delay, Limit: max(maxBackoff, rt.delay)}
}

// logRetry logs each retry of a step.
func (rt retrier) logRetry(key string, value any) func(int, error, time.Duration) {
	return func(attempt int, err error, wait time.Duration) {
		rt.log.Warn("reconciler step failed, retrying", key, value, "attempt", attempt, "retry_in", wait, "error", err)
	}
}
