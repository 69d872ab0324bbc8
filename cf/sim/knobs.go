package sim

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// knobs are the settings tests turn at run time.
type knobs struct {
	latencyNS, tokenTTLNS atomic.Int64

	fmu      sync.Mutex // guards failures
	failures []*Failure
}

func (k *knobs) init(opts Options) {
	k.latencyNS.Store(int64(opts.Latency))
	k.tokenTTLNS.Store(int64(opts.TokenTTL))
	k.set(opts.Failures)
}

func (k *knobs) latency() time.Duration  { return time.Duration(k.latencyNS.Load()) }
func (k *knobs) tokenTTL() time.Duration { return time.Duration(k.tokenTTLNS.Load()) }

// pick returns the failure that affects a request, counting it down.
func (k *knobs) pick(method, tmpl string) (Failure, bool) {
	k.fmu.Lock()
	defer k.fmu.Unlock()
	for i, f := range k.failures {
		if !f.Matches(method, tmpl, "") || (f.Rate > 0 && f.Rate < 1 && rand.Float64() >= f.Rate) {
			continue
		}
		picked := *f
		if f.Count > 0 {
			if f.Count--; f.Count == 0 {
				k.failures = append(k.failures[:i:i], k.failures[i+1:]...)
			}
		}
		return picked, true
	}
	return Failure{}, false
}

// set replaces every failure with fs, which are valid.
func (k *knobs) set(fs []Failure) {
	k.fmu.Lock()
	defer k.fmu.Unlock()
	k.failures = nil
	for _, f := range fs {
		k.failures = append(k.failures, &f)
	}
}

// SetLatency sets the delay added to every request but /_sim (negative = 0).
func (c *knobs) SetLatency(l time.Duration) { c.latencyNS.Store(int64(max(l, 0))) }

// SetTokenTTL sets the lifetime of tokens issued from now on (ignored unless positive).
func (c *knobs) SetTokenTTL(ttl time.Duration) {
	if ttl > 0 {
		c.tokenTTLNS.Store(int64(ttl))
	}
}

// InjectFailure adds a failure; the first added failure that picks a
// request decides what happens to it. An invalid failure is refused with an
// error matching ErrBadOptions.
func (c *knobs) InjectFailure(f Failure) error {
	if err := checkFailure(&f); err != nil {
		return err
	}
	c.fmu.Lock()
	defer c.fmu.Unlock()
	c.failures = append(c.failures, &f)
	return nil
}

// ClearFailures removes every injected failure.
func (c *knobs) ClearFailures() { c.set(nil) }

// Failures returns the failures in effect (with what is left of their Count).
func (c *knobs) Failures() []Failure {
	c.fmu.Lock()
	defer c.fmu.Unlock()
	out := make([]Failure, len(c.failures))
	for i, f := range c.failures {
		out[i] = *f
	}
	return out
}
