package reconciler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
)

// maxErrorLines bounds Summary.Errors; ErrorCount keeps the full count.
const maxErrorLines = 100

// runState is what the stages of one run share: the summary's counters and
// errors, the unmatched deployments, the orphan flags the run changed, and
// the phase and progress Status shows. It is safe for concurrent use.
type runState struct {
	log *slog.Logger

	phase       atomic.Value // string
	done, total atomic.Int64

	mu       sync.Mutex
	sum      Summary
	failedID map[string]string // key -> its first error
	unmatch  []Unmatched
	flagged  map[string]effect // orphan flags changed by this run
	fetched  map[string]bool   // deployments fetched (or taken from the cache) in this run
}

// newRunState starts from sum, in PhaseScanning.
func newRunState(log *slog.Logger, sum Summary) *runState {
	s := &runState{log: log, sum: sum, failedID: map[string]string{}, unmatch: []Unmatched{}, flagged: map[string]effect{}, fetched: map[string]bool{}}
	s.phase.Store(PhaseScanning)
	return s
}

// count changes the summary under the lock.
func (s *runState) count(f func(*Summary)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.sum)
}

// fail records an error; key (may be empty) names the instance or
// deployment it concerns, each counted once in Summary.Failed.
func (s *runState) fail(key string, err error) {
	s.log.Error("reconciler error", "error", err)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.failedID[key]; key != "" && !seen {
		s.failedID[key] = err.Error()
		s.sum.Failed++
	}
	s.sum.ErrorCount++
	if len(s.sum.Errors) < maxErrorLines {
		s.sum.Errors = append(s.sum.Errors, err.Error())
	}
}

// failUnlessStopped records an error, unless it comes from the run being
// cancelled or stopped by a breaker (the run's own error says so once).
func (s *runState) failUnlessStopped(ctx context.Context, key string, err error) {
	if (ctx.Err() != nil && errors.Is(err, ctx.Err())) || errors.Is(err, ErrCircuitOpen) || errors.Is(err, ErrLostLease) {
		return
	}
	s.fail(key, err)
}

// safely runs f, turning a panic into an error of what it worked on.
func (s *runState) safely(what string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("reconciler panic", "on", what, "panic", p, "stack", string(debug.Stack()))
			s.fail(what, fmt.Errorf("%s: panic: %v", what, p))
		}
	}()
	f()
}

// unmatched records a deployment no strategy could tie to an instance.
func (s *runState) unmatched(name, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unmatch = append(s.unmatch, Unmatched{Deployment: name, Reason: reason})
	s.sum.Unmatched++
}

// lowConfidence records a match below the least confidence written (listed
// unmatched too, with the reason).
func (s *runState) lowConfidence(name string, mt Match, least float64) {
	s.unmatched(name, fmt.Sprintf("matched instance %s by %s with confidence %.2f, below reconciler.min_confidence %.2f",
		mt.InstanceID, mt.Strategy, mt.Confidence, least))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sum.LowConfidence = append(s.sum.LowConfidence, LowConfidence{Deployment: name, Match: mt})
}

// conflict records a deployment that lost the instance it claimed to
// another deployment (listed unmatched too, with the reason); kept says the
// winner is the deployment the index record names, which was skipped this
// run.
func (s *runState) conflict(c Conflict, kept bool) {
	s.log.Warn("deployments claim the same instance, the loser is left out",
		"instance", c.InstanceID, "winner", c.Winner, "loser", c.Loser)
	reason := fmt.Sprintf("instance %s is already matched by deployment %s", c.InstanceID, c.Winner)
	if kept {
		reason = fmt.Sprintf("instance %s is kept for deployment %s, which its index record names (skipped this run)", c.InstanceID, c.Winner)
	}
	s.unmatched(c.Loser, reason)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sum.Conflicts = append(s.sum.Conflicts, c)
}

// noteOrphan remembers the orphan flags this run changed.
func (s *runState) noteOrphan(id string, e effect) {
	if e&(effectOrphaned|effectUnorphaned) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flagged[id] = e
}

// summary is a copy of the summary so far.
func (s *runState) summary() Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := s.sum
	sum.Errors = slices.Clone(sum.Errors)
	sum.Conflicts = slices.Clone(sum.Conflicts)
	sum.LowConfidence = slices.Clone(sum.LowConfidence)
	slices.SortFunc(sum.LowConfidence, func(a, b LowConfidence) int { return cmp.Compare(a.Deployment, b.Deployment) })
	sum.MatchedBy = maps.Clone(sum.MatchedBy)
	slices.SortFunc(sum.Conflicts, func(a, b Conflict) int {
		return cmp.Or(cmp.Compare(a.InstanceID, b.InstanceID), cmp.Compare(a.Loser, b.Loser))
	})
	return sum
}

// failures is a copy of the keys that failed, with their first error.
func (s *runState) failures() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.failedID)
}

// orphanFlags is a copy of the orphan flags this run changed.
func (s *runState) orphanFlags() map[string]effect {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.flagged)
}

// unmatchedList is a copy of the unmatched deployments.
func (s *runState) unmatchedList() []Unmatched {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unmatch)
}

func (s *runState) phaseNow() string { return s.phase.Load().(string) }

func (s *runState) progress() Progress {
	return Progress{Done: int(s.done.Load()), Total: int(s.total.Load())}
}

// markFetched notes that a deployment's manifest was in hand this run.
func (s *runState) markFetched(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetched[name] = true
}

// wasFetched says whether a deployment's manifest was in hand this run.
func (s *runState) wasFetched(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetched[name]
}
