package sim

import (
	"sync/atomic"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/simkit"
)

// Knobs are the settings tests turn at run time: the latency added to
// requests, the lifetime of tokens, the rate limit and the injected
// failures. Tests reach them through CC.Knobs, the admin API through
// /_sim/config; their methods are safe for concurrent use.
type Knobs struct {
	latencyNS, tokenTTLNS atomic.Int64
	limit                 limiter // the rate limit, and the count against it
	faults                simkit.FailureSet
}

// newKnobs are the knobs as opts set them at start.
func newKnobs(opts Options) *Knobs {
	k := &Knobs{}
	k.latencyNS.Store(int64(opts.Latency))
	k.tokenTTLNS.Store(int64(opts.TokenTTL))
	k.limit.limit, k.limit.window = opts.RateLimit, opts.RateLimitWindow
	k.faults.Set(opts.Failures)
	return k
}

func (k *Knobs) latency() time.Duration  { return time.Duration(k.latencyNS.Load()) }
func (k *Knobs) tokenTTL() time.Duration { return time.Duration(k.tokenTTLNS.Load()) }

// SetLatency sets the delay added to every request but /_sim (negative = 0).
func (k *Knobs) SetLatency(l time.Duration) { k.latencyNS.Store(int64(max(l, 0))) }

// SetTokenTTL sets the lifetime of tokens issued from now on (ignored unless positive).
func (k *Knobs) SetTokenTTL(ttl time.Duration) {
	if ttl > 0 {
		k.tokenTTLNS.Store(int64(ttl))
	}
}

// InjectFailure adds a failure; the first added failure that picks a
// request decides what happens to it. An invalid failure is refused with an
// error matching ErrBadOptions.
func (k *Knobs) InjectFailure(f Failure) error {
	if err := checkFailure(&f); err != nil {
		return err
	}
	k.faults.Add(f)
	return nil
}

// ClearFailures removes every injected failure.
func (k *Knobs) ClearFailures() { k.faults.Set(nil) }

// Failures returns the failures in effect (with what is left of their Count).
func (k *Knobs) Failures() []Failure { return k.faults.List() }
