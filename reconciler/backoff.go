package reconciler

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// maxBackoff caps the wait between two attempts, whatever Config.RetryDelay says.
const maxBackoff = 5 * time.Minute

// backoff computes exponential waits with jitter: attempt n (from 1) waits
// between half and all of min(base * 2^(n-1), limit).
type backoff struct {
	base, limit time.Duration
	rand        func() float64 // in [0, 1); default rand.Float64
}

// delay is the wait before retry number attempt (1 for the first retry).
func (b backoff) delay(attempt int) time.Duration {
	d := b.base
	for i := 1; i < attempt && d < b.limit; i++ {
		d *= 2
	}
	d = min(d, b.limit)
	r := rand.Float64
	if b.rand != nil {
		r = b.rand
	}
	half := d / 2
	return half + time.Duration(r()*float64(d-half))
}

// terminalError marks an error that retrying cannot mend.
type terminalError struct{ err error }

// Error is the marked error's text.
func (e terminalError) Error() string { return e.err.Error() }

// Unwrap returns the marked error.
func (e terminalError) Unwrap() error { return e.err }

// terminal marks err as not worth retrying.
func terminal(err error) error {
	if err == nil {
		return nil
	}
	return terminalError{err}
}

// isTerminal says err must not be retried: marked terminal, or the context ended.
func isTerminal(ctx context.Context, err error) bool {
	var t terminalError
	return errors.As(err, &t) || ctx.Err() != nil
}

// retry calls fn, and again up to retries more times after a failure, waiting
// b.delay between attempts. onRetry (may be nil) hears of each retry. It
// returns fn's last error.
func retry(ctx context.Context, retries int, b backoff, onRetry func(attempt int, err error), fn func(context.Context) error) error {
	err := fn(ctx)
	for attempt := 1; err != nil && attempt <= retries && !isTerminal(ctx, err); attempt++ {
		if onRetry != nil {
			onRetry(attempt, err)
		}
		t := time.NewTimer(b.delay(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		err = fn(ctx)
	}
	return err
}
