package fleet

import (
	"slices"
	"sync/atomic"

	"github.com/cloudfoundry-community/gogobosh"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
)

// Memo is a value a run derived from a cached copy and inputs of its own
// (the match, the listing entry): the next run that brings the same inputs
// to the same copy takes it instead of deriving it again (a steady run
// digests every deployment's records, and found the same digests).
type Memo struct {
	Match    report.Match
	Name     string
	Director string
	Releases []gogobosh.Resource
	Value    string
}

// same says whether m was derived from these inputs.
func (m *Memo) same(match report.Match, d bosh.Deployment) bool {
	return m != nil && m.Match == match && m.Name == d.Name && m.Director == d.Director && slices.Equal(m.Releases, d.Releases)
}

// memoSlot holds the memo of a cached copy; copies that are not cached
// have none.
type memoSlot struct{ p atomic.Pointer[Memo] }

// Memo is the value kept with s for these inputs; ok false when there is
// none (another input, none derived yet, or s is not a cached copy).
func (s *Fetched) Memo(match report.Match, d bosh.Deployment) (string, bool) {
	if s.memo == nil {
		return "", false
	}
	if m := s.memo.p.Load(); m.same(match, d) {
		return m.Value, true
	}
	return "", false
}

// Remember keeps value, derived from s and these inputs, with s when s is
// a cached copy (it never changes: the value stays right for them).
func (s *Fetched) Remember(match report.Match, d bosh.Deployment, value string) {
	if s.memo != nil {
		s.memo.p.Store(&Memo{Match: match, Name: d.Name, Director: d.Director, Releases: slices.Clone(d.Releases), Value: value})
	}
}
