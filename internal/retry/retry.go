// Package retry is the one retry loop of the project: exponential backoff
// with jitter, errors marked terminal are not retried, and every wait ends
// with its context. The reconciler retries its steps with it, the vault
// package its check-and-set conflicts, the daemon its first connections.
package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"
)

// Backoff computes exponential waits with jitter: attempt n (from 1) waits
// between half and all of min(Base * 2^(n-1), Limit).
type Backoff struct {
	// Base is the wait before the first retry (before jitter).
	Base time.Duration
	// Limit caps a wait (before jitter); at least Base.
	Limit time.Duration
	// Rand draws the jitter in [0, 1). Default rand.Float64.
	Rand func() float64
}

// Ceiling is the longest wait before retry number attempt (1 for the first
// retry): min(Base * 2^(attempt-1), Limit), without jitter.
func (b Backoff) Ceiling(attempt int) time.Duration {
	limit := max(b.Limit, b.Base)
	d := b.Base
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// Delay is the wait before retry number attempt (1 for the first retry):
// between half and all of Ceiling(attempt).
func (b Backoff) Delay(attempt int) time.Duration {
	d := b.Ceiling(attempt)
	r := rand.Float64
	if b.Rand != nil {
		r = b.Rand
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

// Terminal marks err as not worth retrying; nil stays nil.
func Terminal(err error) error {
	if err == nil {
		return nil
	}
	return terminalError{err}
}

// IsTerminal says err must not be retried: marked Terminal, or ctx ended.
func IsTerminal(ctx context.Context, err error) bool {
	var t terminalError
	return errors.As(err, &t) || ctx.Err() != nil
}

// Sleep waits d, or until ctx ends (its error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Do calls fn, and again up to retries more times after a failure (retries
// < 0: until it succeeds, fails terminally or ctx ends), waiting b.Delay
// between attempts. onRetry (may be nil) hears of each retry, with the
// failure and the wait before it. It returns fn's last error, joined with
// ctx's when ctx ended a wait.
func Do(ctx context.Context, retries int, b Backoff, onRetry func(attempt int, err error, wait time.Duration), fn func(context.Context) error) error {
	err := fn(ctx)
	for attempt := 1; err != nil && (retries < 0 || attempt <= retries) && !IsTerminal(ctx, err); attempt++ {
		wait := b.Delay(attempt)
		if onRetry != nil {
			onRetry(attempt, err, wait)
		}
		if serr := Sleep(ctx, wait); serr != nil {
			return errors.Join(err, serr)
		}
		err = fn(ctx)
	}
	return err
}
