package platform

import (
	"maps"
	"time"
)

// DocName is the state document of the orphan deployments' proof.
const DocName = "platform"

// MaxAbsent and MaxAbsentBytes bound the orphan deployments the document
// follows (its JSON within a state document's 256 KiB, whatever the ids'
// length: 2,500 UUID ids take about 230 KiB): beyond them, newer ones are
// reported and never retired (so many orphans say the platform read is
// wrong, not that the fleet is; more than max_per_run or 10% of the fleet
// are refused anyway).
const (
	MaxAbsent      = 2500
	MaxAbsentBytes = 240 << 10
)

// entryBytes is about what an entry of id takes in the document's JSON
// (the id quoted, three numbers and their keys).
func entryBytes(id string) int { return len(id) + 60 }

// Doc is the state document: each orphan deployment's first whole read of
// the platform without it, and how many whole reads have not found it.
type Doc struct {
	Absent map[string]Entry `json:"absent"`
}

// Entry is one orphan deployment's proof.
type Entry struct {
	// Since is the first read without it (Unix seconds), Reads how many
	// whole reads since (that one included) have not found it and counted.
	Since int64 `json:"since"`
	Reads int   `json:"reads"`
	// Last is the last read that counted (Unix seconds; 0: Since, a proof
	// written before reads were spread). A read counts only a spacing
	// after it: forced runs in a row prove nothing.
	Last int64 `json:"last,omitempty"`
}

// MinReads is how many whole reads, spread over min_age, prove that the
// platform does not have an instance: the first and the last min_age
// apart, each min_age/(MinReads-1) after the one before.
const MinReads = 3

// Spacing is how long after the last counted read another one counts.
func Spacing(minAge time.Duration) time.Duration { return minAge / (MinReads - 1) }

// last is the last read that counted.
func (e Entry) last() int64 {
	if e.Last == 0 {
		return e.Since
	}
	return e.Last
}

// Next is the document after a whole read at readAt that found the orphan
// deployments orphans: each one's proof goes on (one read more when it is
// spacing after the last one counted) or starts (fresh), the
// records not judged (unchecked: a Director out of the run, an operation
// in progress) keep theirs as they are, and every other proof ends (the
// platform has the instance again, or its deployment is gone).
func Next(doc Doc, orphans, unchecked []string, readAt time.Time, spacing time.Duration) (next Doc, fresh []string) {
	next = Doc{Absent: make(map[string]Entry, len(orphans))}
	size := 0
	for _, id := range unchecked {
		if e, ok := doc.Absent[id]; ok {
			next.Absent[id] = e
			size += entryBytes(id)
		}
	}
	var started []string
	for _, id := range orphans {
		if e, ok := doc.Absent[id]; ok {
			if readAt.Sub(time.Unix(e.last(), 0)) >= spacing { // a read too soon after the last one is not counted
				e.Reads, e.Last = e.Reads+1, readAt.Unix()
			}
			next.Absent[id] = e
			size += entryBytes(id)
		} else {
			started = append(started, id)
		}
	}
	for _, id := range started { // the proofs carried on first: the cap never drops one
		if len(next.Absent) >= MaxAbsent || size+entryBytes(id) > MaxAbsentBytes {
			break
		}
		size += entryBytes(id)
		next.Absent[id] = Entry{Since: readAt.Unix(), Reads: 1}
		fresh = append(fresh, id)
	}
	return next, fresh
}

// Equal says whether two documents hold the same proofs.
func (d Doc) Equal(o Doc) bool { return maps.Equal(d.Absent, o.Absent) }

// Proven says whether an orphan deployment's absence is proven at now: at
// least MinReads whole reads without it, spread (Next's spacing), the
// first and the last at least minAge apart.
func (e Entry) Proven(now time.Time, minAge time.Duration) bool {
	first, last := time.Unix(e.Since, 0), time.Unix(e.last(), 0)
	return e.Reads >= MinReads && last.Sub(first) >= minAge && now.Sub(first) >= minAge
}
