package reconciler

import "time"

// flushEvery is the least time between two index writes while changes keep
// coming: changes that arrive meanwhile are written together, so that a
// cold run over thousands of instances writes each index shard a few times
// rather than once per batch_size instances.
const flushEvery = 5 * time.Second

// shardsWrite is about what one write of every index shard takes: the end
// of a run is foreseen at least twice this far ahead (the first write, of
// batch_size changes, says little of how long a write of every shard takes).
const shardsWrite = 150 * time.Millisecond

// flushPolicy says when the index writer writes.
type flushPolicy struct {
	batchSize int
	began     time.Time     // when the index writer started
	last      time.Time     // when the last write began
	took      time.Duration // how long the last write took
}

// due says whether the n changes waiting are to be written now: at the end
// of the run; else once Config.BatchSize of them are waiting and either
// flushEvery has passed since the last write began, or the run looks set to
// end within two writes like the last one, so that what is left for the end
// of the run is a small write rather than one of every shard.
func (f *flushPolicy) due(n int, closed bool, p Progress) bool {
	switch {
	case closed:
		return true
	case n < f.batchSize:
		return false
	case time.Since(f.last) >= flushEvery:
		return true
	}
	if p.Done == 0 || p.Total <= p.Done {
		return false
	}
	left := time.Duration(float64(time.Since(f.began)) * float64(p.Total-p.Done) / float64(p.Done))
	return left <= 2*max(f.took, shardsWrite)
}
