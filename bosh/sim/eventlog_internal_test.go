package sim

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// ids lists the ids of the events l keeps, oldest first.
func ids(l *eventLog) []int64 {
	var out []int64
	for _, e := range l.live() {
		out = append(out, e.id)
	}
	return out
}

var _ = Describe("the event log's pruning", func() {
	// record adds events; each parent is the id an event names, 0 for none.
	record := func(l *eventLog, parents ...int64) {
		for _, p := range parents {
			l.add(event{parent: p})
		}
	}

	It("keeps the newest, ids consecutive, and reuses the room it frees", func() {
		l := &eventLog{kept: 3}
		for range 1000 {
			record(l, 0)
		}
		Expect(ids(l)).To(Equal([]int64{998, 999, 1000}))
		Expect(cap(l.buf)).To(BeNumerically("<", 20), "the dropped events do not pile up")
	})

	It("keeps from the oldest parent of a kept end event, as the Director's cleanup does", func() {
		l := &eventLog{kept: 3}
		record(l, 0, 0, 0, 0, 2) // 5 ends 2
		Expect(ids(l)).To(Equal([]int64{2, 3, 4, 5}))
		record(l, 0, 0) // 5 is still among the newest 3
		Expect(ids(l)).To(Equal([]int64{2, 3, 4, 5, 6, 7}))
		record(l, 0)
		Expect(ids(l)).To(Equal([]int64{6, 7, 8}))
	})

	It("keeps no more than it can when the parent is already gone, and catches up", func() {
		l := &eventLog{kept: 2}
		record(l, 0, 0, 0, 0, 1) // 5 ends 1, dropped long ago
		Expect(ids(l)).To(Equal([]int64{3, 4, 5}))
		record(l, 0)
		Expect(ids(l)).To(Equal([]int64{3, 4, 5, 6}))
		record(l, 0)
		Expect(ids(l)).To(Equal([]int64{6, 7}))
	})

	It("prunes at once when fewer are to be kept", func() {
		l := &eventLog{kept: 10}
		record(l, 0, 0, 0, 0, 0, 4)
		l.setKept(1)
		Expect(ids(l)).To(Equal([]int64{4, 5, 6}))
		l.setKept(10)
		record(l, 0)
		Expect(ids(l)).To(Equal([]int64{4, 5, 6, 7}), "nothing comes back")
	})
})
