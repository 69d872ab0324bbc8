package memory

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// maxErrorLines bounds Summary.Errors; ErrorCount keeps the full count.
const maxErrorLines = 100

// Ledger is what the stages of one run share: the summary's counters and
// errors, the unmatched deployments, the orphan flags the run changed and
// the deployments it fetched. It is safe for concurrent use.
type Ledger struct {
	log *slog.Logger

	mu       sync.Mutex
	sum      report.Summary
	failedID map[string]string // key -> its first error
	passing  map[string]bool   // keys whose first error was a transient fault of a Director (bosh.Transient)
	unmatch  []report.Unmatched
	flagged  map[string]Effect // orphan flags changed by this run
	fetched  map[string]bool   // deployments fetched (or taken from the cache) in this run
}

// Effect is what an index change did to a record (a set of flags).
type Effect uint8

// What an index change does.
const (
	EffectCreated Effect = 1 << iota
	EffectUpdated
	EffectUnorphaned
	EffectOrphaned
)

// NewLedger starts from sum.
func NewLedger(log *slog.Logger, sum report.Summary) *Ledger {
	return &Ledger{log: log, sum: sum, failedID: map[string]string{}, passing: map[string]bool{}, unmatch: []report.Unmatched{},
		flagged: map[string]Effect{}, fetched: map[string]bool{}}
}

// Count changes the summary under the lock.
func (s *Ledger) Count(f func(*report.Summary)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.sum)
}

// Fail records an error; key (may be empty) names the instance or
// deployment it concerns, each counted once in Summary.Failed.
// Its text is cut to MaxErrorText (a Director's content may make it
// megabytes) wherever it goes: the log, the summary, the quarantine.
func (s *Ledger) Fail(key string, err error) {
	msg := report.Truncate(err.Error(), MaxErrorText)
	s.log.Error("reconciler error", "error", msg)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, seen := s.failedID[key]; key != "" && !seen {
		s.failedID[key] = msg
		s.passing[key] = bosh.Transient(err)
		s.sum.Failed++
	}
	s.sum.ErrorCount++
	if len(s.sum.Errors) < maxErrorLines {
		s.sum.Errors = append(s.sum.Errors, msg)
	}
}

// FailUnlessStopped records an error, unless it comes from the run being
// cancelled or stopped by a breaker or the lost lease (the run's own error
// says so once).
func (s *Ledger) FailUnlessStopped(ctx context.Context, key string, err error) {
	if guard.Stopped(ctx, err) {
		return
	}
	s.Fail(key, err)
}

// Safely runs f, turning a panic into an error of what it worked on.
func (s *Ledger) Safely(what string, f func()) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("reconciler panic", "on", what, "panic", p, "stack", string(debug.Stack()))
			s.Fail(what, fmt.Errorf("%s: panic: %v", what, p))
		}
	}()
	f()
}

// Unmatched records a deployment no strategy could tie to an instance:
// counted whole, the first MaxUnmatchedListed listed (the status serves
// them at every poll), each name and reason cut to MaxErrorText; foreign
// says nothing about it is the broker's (counted apart: it does not keep
// the run from converging).
func (s *Ledger) Unmatched(name, reason string, foreign bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.unmatch) < MaxUnmatchedListed {
		s.unmatch = append(s.unmatch, report.Unmatched{Deployment: report.Truncate(name, MaxErrorText),
			Reason: report.Truncate(reason, MaxErrorText), Foreign: foreign})
	}
	s.sum.Unmatched++
	if foreign {
		s.sum.Foreign++
	}
}

// MaxUnmatchedListed bounds the unmatched deployments a run lists (the
// count is whole).
const MaxUnmatchedListed = 1000

// LowConfidence records a match below the least confidence written (listed
// Unmatched too, with the reason).
func (s *Ledger) LowConfidence(name string, mt report.Match, least float64) {
	s.Unmatched(name, fmt.Sprintf("matched instance %s by %s with confidence %.2f, below reconciler.min_confidence %.2f",
		mt.InstanceID, mt.Strategy, mt.Confidence, least), false)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.sum.LowConfidence) < maxLoggedItems {
		s.sum.LowConfidence = append(s.sum.LowConfidence, report.LowConfidence{Deployment: name, Match: mt})
	}
}

// Conflict records a deployment that claimed an instance it does not get
// (listed unmatched too, with reason).
func (s *Ledger) Conflict(c report.Conflict, reason string) {
	s.log.Warn("deployments claim the same instance, the loser is left out",
		"instance", c.InstanceID, "winner", c.Winner, "loser", c.Loser, "loser_director", c.LoserDirector)
	s.Unmatched(c.Loser, reason, false)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sum.Conflicts = append(s.sum.Conflicts, c)
}

// NoteOrphan remembers the orphan flags this run changed.
func (s *Ledger) NoteOrphan(id string, e Effect) {
	if e&(EffectOrphaned|EffectUnorphaned) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.flagged[id] = e
}

// Summary is a copy of the summary so far.
func (s *Ledger) Summary() report.Summary {
	s.mu.Lock()
	defer s.mu.Unlock()
	sum := s.sum
	sum.Errors = slices.Clone(sum.Errors)
	sum.Conflicts = slices.Clone(sum.Conflicts)
	sum.LowConfidence = slices.Clone(sum.LowConfidence)
	slices.SortFunc(sum.LowConfidence, func(a, b report.LowConfidence) int { return cmp.Compare(a.Deployment, b.Deployment) })
	sum.MatchedBy = maps.Clone(sum.MatchedBy)
	slices.SortFunc(sum.Conflicts, func(a, b report.Conflict) int {
		return cmp.Or(cmp.Compare(a.InstanceID, b.InstanceID), cmp.Compare(a.Loser, b.Loser))
	})
	return sum
}

// Failures is a copy of the keys that failed, with their first error.
func (s *Ledger) Failures() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.failedID)
}

// TransientFailures are the keys that failed on a transient fault of a
// Director (an answer 5xx or 429, no answer): the Director's failures, it
// may be, rather than the deployment's.
func (s *Ledger) TransientFailures() map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]bool{}
	for k, t := range s.passing {
		if t {
			out[k] = true
		}
	}
	return out
}

// OrphanFlags is a copy of the orphan flags this run changed.
func (s *Ledger) OrphanFlags() map[string]Effect {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.flagged)
}

// UnmatchedList is a copy of the unmatched deployments.
func (s *Ledger) UnmatchedList() []report.Unmatched {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unmatch)
}

// MarkFetched notes that a deployment's manifest was in hand this run.
func (s *Ledger) MarkFetched(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fetched[name] = true
}

// WasFetched says whether a deployment's manifest was in hand this run.
func (s *Ledger) WasFetched(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fetched[name]
}
