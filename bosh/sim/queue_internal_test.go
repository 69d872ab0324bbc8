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
		d.release(ts[0])
		Expect(admitted(ts[2])).To(BeTrue(), "the oldest waiting task takes the freed worker")
		Expect(d.queue.waiting).To(BeEmpty())
		Expect(d.queue.running).To(Equal(2))
	})

	It("gives the dedicated status worker the oldest urgent task alone, and the others every task by age", func() {
		d := &Director{queue: taskQueue{workers: 3, status: true}}
		deploy := func(id int) *task { return &task{id: id, kind: kindDeploy, admit: make(chan struct{})} }
		vms := func(id int) *task { return &task{id: id, kind: kindVMState, admit: make(chan struct{})} }
		ts := []*task{deploy(1), deploy(2), deploy(3), vms(4), vms(5)}
		for _, t := range ts {
			d.queue.enqueueLocked(t)
		}
		Expect([]bool{admitted(ts[0]), admitted(ts[1]), admitted(ts[2]), admitted(ts[3]), admitted(ts[4])}).
			To(Equal([]bool{true, true, false, true, false}), "two general workers take the deploys by age, the status worker the first vm-state task")
		Expect(ts[3].statusWorker).To(BeTrue())

		d.release(ts[3])
		Expect(admitted(ts[4])).To(BeTrue(), "the status worker takes the next urgent task, past an older deploy")
		Expect(admitted(ts[2])).To(BeFalse(), "a deploy never goes to the status worker")
		d.release(ts[0])
		Expect(admitted(ts[2])).To(BeTrue())
	})

	It("serves both queues by age on every worker without the dedicated worker, as the Director's default", func() {
		d := &Director{queue: taskQueue{workers: 1, status: true}} // one worker: no dedicated one, as bpm.yml decides
		vmsTask := &task{id: 1, kind: kindVMState, admit: make(chan struct{})}
		deploy := &task{id: 2, kind: kindDeploy, admit: make(chan struct{})}
		d.queue.enqueueLocked(vmsTask)
		d.queue.enqueueLocked(deploy)
		Expect(admitted(vmsTask)).To(BeTrue())
		Expect(admitted(deploy)).To(BeFalse(), "a deploy waits behind a vm-state task that came first")
		d.release(vmsTask)
		Expect(admitted(deploy)).To(BeTrue())
	})
})
