package fleet

import (
	"encoding/binary"
	"hash/maphash"
	"math"
	"sync/atomic"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// memo is a value a run derived from a cached copy and inputs of its own
// (the match, the listing entry): the next run that brings the same inputs
// to the same copy takes it instead of deriving it again (a steady run
// digests every deployment's records, and found the same digests). The
// inputs are kept as two 64-bit hashes of independent seeds, not as
// themselves: a memo of every deployment lives between runs, and keeping
// the inputs kept each run's listing strings alive (~330 bytes a
// deployment, against ~100).
type memo struct {
	key   [2]uint64
	value string
}

var memoSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

// memoKey hashes the inputs, each length-prefixed so that no two lists of
// inputs write the same bytes.
func memoKey(m report.Match, d bosh.Deployment) [2]uint64 {
	var key [2]uint64
	for i, seed := range memoSeeds {
		var h maphash.Hash
		h.SetSeed(seed)
		var n [8]byte
		str := func(s string) {
			binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
			h.Write(n[:])
			h.WriteString(s)
		}
		str(m.InstanceID)
		str(m.ServiceID)
		str(m.PlanID)
		str(string(m.Strategy))
		str(m.Rule)
		binary.LittleEndian.PutUint64(n[:], math.Float64bits(m.Confidence))
		h.Write(n[:])
		str(d.Name)
		str(d.Director)
		binary.LittleEndian.PutUint64(n[:], uint64(len(d.Releases)))
		h.Write(n[:])
		for _, r := range d.Releases {
			str(r.Name)
			str(r.Version)
		}
		key[i] = h.Sum64()
	}
	return key
}

// memoSlot holds the memo of a cached copy, shared with the copy the fetch
// that cached it returned; other copies have none.
type memoSlot struct {
	p     atomic.Pointer[memo]
	parse atomic.Pointer[lazyParse] // the cached copy's, once needed (Fetched.parsed)
}

// Memo is the value kept with s for these inputs; ok false when there is
// none (other inputs, none derived yet, or s is not a cached copy).
func (s *Fetched) Memo(m report.Match, d bosh.Deployment) (string, bool) {
	if s.memo == nil {
		return "", false
	}
	if kept := s.memo.p.Load(); kept != nil && kept.key == memoKey(m, d) {
		return kept.value, true
	}
	return "", false
}

// Remember keeps value, derived from s and these inputs only, with s when
// s is a cached copy (s never changes: the value stays right for them).
func (s *Fetched) Remember(m report.Match, d bosh.Deployment, value string) {
	if s.memo != nil {
		s.memo.p.Store(&memo{key: memoKey(m, d), value: value})
	}
}
