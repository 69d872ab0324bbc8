package sim

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

var _ = Describe("the task queue", func() {
	admitted := func(t *task) bool {
		select {
		case <-t.admit:
			return true
		default:
			return false
		}
	}
	newTask := func(id int) *task { return &task{id: id, admit: make(chan struct{})} }

	It("decides who runs when a task is created, not when its goroutine gets there", func() {
		d := &Director{queue: taskQueue{workers: 2}}
		ts := []*task{newTask(1), newTask(2), newTask(3), newTask(4)}
		for _, t := range ts {
			d.queue.enqueueLocked(t)
		}
		Expect([]bool{admitted(ts[0]), admitted(ts[1]), admitted(ts[2]), admitted(ts[3])}).To(Equal([]bool{true, true, false, false}))

		Expect(d.withdraw(ts[0])).To(BeFalse(), "a worker took it")
		Expect(d.withdraw(ts[3])).To(BeTrue(), "a queued one is taken out (cancelled)")
		d.release()
		Expect(admitted(ts[2])).To(BeTrue(), "the oldest waiting task takes the freed worker")
		Expect(d.queue.waiting).To(BeEmpty())
		Expect(d.queue.running).To(Equal(2))
	})
})
