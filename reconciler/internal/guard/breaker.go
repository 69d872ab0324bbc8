package guard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var (
	// ErrCircuitOpen is the cause of a run stopped by a circuit breaker: the
	// Director, or Vault, failed Config.BreakerThreshold requests in a row.
	ErrCircuitOpen = errors.New("circuit open")
	// ErrLostLease is the cause of a run stopped because its daemon no
	// longer holds the reconciler lease: it writes nothing more.
	ErrLostLease = errors.New("the reconciler lease was lost")
)

// Stopped says whether err comes from the run being stopped (ctx ended, a
// breaker opened, the lease was lost) rather than from the item it
// concerns: the run's own error says why it stopped, once.
func Stopped(ctx context.Context, err error) bool {
	return (ctx.Err() != nil && errors.Is(err, ctx.Err())) || errors.Is(err, ErrCircuitOpen) || errors.Is(err, ErrLostLease)
}

// Breaker is a run's circuit breaker for one system. Every request the run
// makes to the system reports its outcome; after threshold failures in a
// row (an answer of the system, such as "not found", is not a failure) the
// breaker opens: it calls trip with an ErrCircuitOpen cause naming the
// system and the last error, and every later request fails at once without
// reaching the system. A breaker lives as long as its run: the next run
// starts closed, its first request is the probe.
type Breaker struct {
	system    string
	threshold int
	failure   func(error) bool        // is err the system failing (not an answer)?
	trip      context.CancelCauseFunc // what opening does

	mu    sync.Mutex
	fails int
	open  error // the cause, once open
}

// NewBreaker returns a closed breaker for system that calls trip when it
// opens; failure tells a failure of the system from one of its answers
// (DirectorFailure, VaultFailure).
func NewBreaker(system string, threshold int, failure func(error) bool, trip context.CancelCauseFunc) *Breaker {
	return &Breaker{system: system, threshold: max(threshold, 1), failure: failure, trip: trip}
}

// Call runs req unless the breaker is open, and records its outcome.
func Call[T any](b *Breaker, ctx context.Context, req func(context.Context) (T, error)) (T, error) {
	if err := b.check(); err != nil {
		var zero T
		return zero, err
	}
	v, err := req(ctx)
	b.record(ctx, err)
	return v, err
}

// do is Call for a request that returns only an error.
func do(b *Breaker, ctx context.Context, req func(context.Context) error) error {
	_, err := Call(b, ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, req(ctx) })
	return err
}

// check is the open breaker's error (terminal: not worth retrying), nil
// while closed.
func (b *Breaker) check() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return retry.Terminal(b.open)
}

// record counts a failure in a row, or resets the count; a request that
// ended because the run did is neither.
func (b *Breaker) record(ctx context.Context, err error) {
	if err != nil && ctx.Err() != nil {
		return
	}
	b.mu.Lock()
	if err == nil || !b.failure(err) {
		b.fails = 0
		b.mu.Unlock()
		return
	}
	b.fails++
	if b.fails < b.threshold || b.open != nil {
		b.mu.Unlock()
		return
	}
	b.open = fmt.Errorf("%w: %s: %d requests in a row failed, the run stops (the next run tries again); last error: %w",
		ErrCircuitOpen, b.system, b.fails, err)
	cause := b.open
	b.mu.Unlock()
	b.trip(cause)
}

// DirectorFailure says whether err is the Director failing: anything but an
// answer below 500 (other than 429), such as "not found" or "unauthorized".
func DirectorFailure(err error) bool {
	var api *bosh.APIError
	if errors.As(err, &api) {
		return api.StatusCode >= 500 || api.StatusCode == http.StatusTooManyRequests
	}
	return !errors.Is(err, bosh.ErrDeploymentNotFound) && !errors.Is(err, bosh.ErrTaskNotFound) &&
		!errors.Is(err, bosh.ErrUnauthorized) && !errors.Is(err, bosh.ErrAnswerTooLarge) &&
		!errors.Is(err, bosh.ErrUntrustedUAA)
}

// vaultAnswers are the errors by which Vault (or the vault package) answers
// about the data, not about its own health.
var vaultAnswers = []error{vault.ErrCorrupt, vault.ErrConflict, vault.ErrNotFound, vault.ErrInvalid,
	vault.ErrTooLarge, vault.ErrDenied, vault.ErrNotMigrated, vault.ErrUnsupportedLayout}

// VaultFailure says whether err is Vault failing (unreachable, sealed,
// server errors), not an answer about the data.
func VaultFailure(err error) bool {
	for _, a := range vaultAnswers {
		if errors.Is(err, a) {
			return false
		}
	}
	return true
}
