package sim

import (
	"math/rand/v2"
	"sync"
)

// Faults are the failures injected into the Director's answers
// (Director.Faults). Its methods are safe for concurrent use.
type Faults struct {
	mu       sync.Mutex
	failures []*Failure
}

// pick returns the failure that affects a request, counting it down.
func (fs *Faults) pick(method, tmpl, name string) (Failure, bool) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for i, f := range fs.failures {
		if !f.Matches(method, tmpl, name) || (f.Rate > 0 && f.Rate < 1 && rand.Float64() >= f.Rate) {
			continue
		}
		picked := *f
		if f.Count > 0 {
			if f.Count--; f.Count == 0 {
				fs.failures = append(fs.failures[:i:i], fs.failures[i+1:]...)
			}
		}
		return picked, true
	}
	return Failure{}, false
}

// Inject adds a failure; the first added failure that picks a request
// decides what happens to it. A failure with a rate outside 0..1, a status
// outside 200..599 (0 = 500), or a negative delay or count is refused with
// an error matching ErrBadOptions.
func (fs *Faults) Inject(f Failure) error {
	if err := checkFailure(&f); err != nil {
		return err
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.failures = append(fs.failures, &f)
	return nil
}

// set replaces every failure with failures, which are valid.
func (fs *Faults) set(failures []Failure) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.failures = nil
	for _, f := range failures {
		fs.failures = append(fs.failures, &f)
	}
}

// Clear removes every injected failure.
func (fs *Faults) Clear() {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.failures = nil
}

// List returns the failures in effect (with what is left of their Count).
func (fs *Faults) List() []Failure {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	out := make([]Failure, len(fs.failures))
	for i, f := range fs.failures {
		out[i] = *f
	}
	return out
}
