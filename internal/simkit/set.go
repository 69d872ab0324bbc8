package simkit

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"
)

// FailureSet is a simulator's failures in effect, in the order they were
// added: the first that picks a request decides what happens to it. Its
// methods are safe for concurrent use; the zero value has none.
type FailureSet struct {
	mu       sync.Mutex
	failures []*Failure
}

// Pick returns the failure that affects a request of method to the route
// tmpl (naming deployment name, "" when none), counting it down: one whose
// Count reaches 0 leaves the set.
func (s *FailureSet) Pick(method, tmpl, name string) (Failure, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.failures {
		if !f.Matches(method, tmpl, name) || (f.Rate > 0 && f.Rate < 1 && rand.Float64() >= f.Rate) {
			continue
		}
		picked := *f
		if f.Count > 0 {
			if f.Count--; f.Count == 0 {
				s.failures = append(s.failures[:i:i], s.failures[i+1:]...)
			}
		}
		return picked, true
	}
	return Failure{}, false
}

// Add adds f, which the caller checked, after the others.
func (s *FailureSet) Add(f Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, &f)
}

// Set replaces every failure with failures, which the caller checked.
func (s *FailureSet) Set(failures []Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = nil
	for _, f := range failures {
		s.failures = append(s.failures, &f)
	}
}

// List returns the failures in effect, with what is left of their Count.
func (s *FailureSet) List() []Failure {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Failure, len(s.failures))
	for i, f := range s.failures {
		out[i] = *f
	}
	return out
}

// Sleep waits for d or until ctx ends (a simulated delay or latency); it
// reports whether it waited the whole time.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
