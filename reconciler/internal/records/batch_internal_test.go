package records

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("when the batcher writes", func() {
	DescribeTable("writes at the end, every flushEvery (or ten times what a write takes), and back to back when the run is about to end",
		func(waiting int, closed bool, sinceLast, took, sinceBegan time.Duration, done, total int, want bool) {
			now := time.Now()
			f := flushPolicy{batchSize: 10, began: now.Add(-sinceBegan), last: now.Add(-sinceLast), took: took}
			Expect(f.due(waiting, closed, report.Progress{Done: done, Total: total})).To(Equal(want))
		},
		Entry("the end of the run, whatever is waiting", 1, true, 0*time.Second, time.Duration(0), time.Second, 5, 10, true),
		Entry("fewer than batch_size waiting", 9, false, time.Minute, time.Duration(0), time.Minute, 10, 1000, false),
		Entry("the first batch_size", 10, false, time.Minute, time.Duration(0), time.Second, 10, 1000, true),
		Entry("within flushEvery of the last write, far from the end", 500, false, time.Second, 100*time.Millisecond, 10*time.Second, 500, 1000, false),
		Entry("past flushEvery", 500, false, flushEvery, 100*time.Millisecond, 10*time.Second, 500, 1000, true),
		Entry("past flushEvery, within ten times what the last write took", 5000, false, 2*flushEvery, flushEvery, 10*time.Minute, 5000, 100000, false),
		Entry("past ten times what the last write took", 5000, false, 10*flushEvery, flushEvery, 10*time.Minute, 5000, 100000, true),
		Entry("past flushMost, whatever the last write took", 5000, false, flushMost, 10*flushMost, 10*time.Minute, 5000, 100000, true),
		Entry("the run ends within two writes like the last", 100, false, time.Second, time.Second, 10*time.Second, 900, 1000, true),
		Entry("the run ends within two writes of every shard", 100, false, time.Second, 10*time.Millisecond, 10*time.Second, 990, 1000, true),
		Entry("nothing done yet", 10, false, time.Second, time.Second, time.Second, 0, 1000, false),
	)
})

var _ = Describe("a batch's parts", func() {
	batch := func(n int) map[string]*Queued {
		byID := map[string]*Queued{}
		for i := range n {
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			byID[id] = &Queued{ID: id}
		}
		return byID
	}

	It("is one part when the index has at most shardsPerWrite shards, or its count is not known", func() {
		for _, n := range []int{0, 1, 128, shardsPerWrite} {
			parts := partsOf(batch(3000), n)
			Expect(parts).To(HaveLen(1), "%d shards", n)
			Expect(parts[0]).To(HaveLen(3000))
		}
	})

	It("holds at most shardsPerWrite shards a part, every change in one part, a shard's changes together", func() {
		const n = 2048
		byID := batch(20000)
		parts := partsOf(byID, n)
		Expect(parts).To(HaveLen(n / shardsPerWrite))
		seen := map[string]bool{}
		partOf := map[int]int{}
		for i, part := range parts {
			shards := map[int]bool{}
			for id := range part {
				Expect(seen[id]).To(BeFalse(), "%s in two parts", id)
				seen[id] = true
				sh := vault.ShardOf(id, n)
				shards[sh] = true
				if j, ok := partOf[sh]; ok {
					Expect(j).To(Equal(i), "shard %d split over parts", sh)
				}
				partOf[sh] = i
			}
			Expect(len(shards)).To(BeNumerically("<=", shardsPerWrite))
		}
		Expect(seen).To(HaveLen(len(byID)))
	})
})

// paceIndex is an index that keeps how many shards at a time each write
// was given, and writes nothing.
type paceIndex struct {
	mu     sync.Mutex
	atOnce []int
	gate   chan struct{} // when set, the first write waits for it
}

func (p *paceIndex) Index(context.Context) (*vault.Index, error) { return nil, nil }
func (p *paceIndex) Update(context.Context, map[string]vault.Change) (vault.UpdateResult, error) {
	return vault.UpdateResult{}, nil
}
func (p *paceIndex) UpdateOver(_ context.Context, changes map[string]vault.Change, _ *vault.Index, atOnce int) (vault.UpdateResult, error) {
	p.mu.Lock()
	p.atOnce = append(p.atOnce, atOnce)
	first := len(p.atOnce) == 1
	p.mu.Unlock()
	if first && p.gate != nil {
		<-p.gate
	}
	return vault.UpdateResult{Changed: slices.Sorted(maps.Keys(changes))}, nil
}
func (p *paceIndex) paces() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.atOnce)
}

type noCounters struct{}

func (noCounters) Wrote(string, int) {}
func (noCounters) Drift()            {}

var _ = Describe("a batch's pace", func() {
	It("is shardsAtOnceBeside shards at a time while changes still come, Update's for the last batch", func() {
		idx := &paceIndex{}
		s := Shared{Ledger: memory.NewLedger(slog.New(slog.DiscardHandler), report.Summary{}), Counters: noCounters{}}
		var accounted atomic.Int64
		b := startBatcher(context.Background(), idx, 1, memory.Policy{}, &memory.Progress{}, s,
			func(*Queued, memory.Effect) { accounted.Add(1) })
		b.queue(&Queued{ID: "first", eff: new(memory.Effect)})
		Eventually(idx.paces).Should(Equal([]int{shardsAtOnceBeside}), "the first batch_size goes at once, beside the workers")
		b.queue(&Queued{ID: "second", eff: new(memory.Effect)}) // within flushEvery: waits for the end
		b.stop()
		Expect(idx.paces()).To(Equal([]int{shardsAtOnceBeside, 0}))
		Expect(accounted.Load()).To(BeEquivalentTo(2))
	})

	It("writes the parts left of a batch under way at Update's pace once every change is queued", func() {
		idx := &paceIndex{gate: make(chan struct{})}
		s := Shared{Shards: 2048, Ledger: memory.NewLedger(slog.New(slog.DiscardHandler), report.Summary{}), Counters: noCounters{}}
		b := startBatcher(context.Background(), idx, 600, memory.Policy{}, &memory.Progress{}, s, func(*Queued, memory.Effect) {})
		for i := range 600 { // over ~520 of 2,048 shards: parts of at most shardsPerWrite
			id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
			b.queue(&Queued{ID: id, eff: new(memory.Effect)})
		}
		Eventually(idx.paces).Should(HaveLen(1), "the batch's first part is being written")
		stopped := make(chan struct{})
		go func() { b.stop(); close(stopped) }()
		Eventually(b.closing.Load).Should(BeTrue())
		close(idx.gate)
		<-stopped
		paces := idx.paces()
		Expect(len(paces)).To(BeNumerically(">=", 2))
		Expect(paces[0]).To(Equal(shardsAtOnceBeside))
		Expect(paces[1:]).To(HaveEach(0))
	})
})
