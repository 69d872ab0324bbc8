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
		rn := &runner{db: &store{queue: taskQueue{workers: 2}}}
		ts := []*task{newTask(1), newTask(2), newTask(3), newTask(4)}
		for _, t := range ts {
			rn.db.queue.enqueueLocked(t)
		}
		Expect([]bool{admitted(ts[0]), admitted(ts[1]), admitted(ts[2]), admitted(ts[3])}).To(Equal([]bool{true, true, false, false}))

		Expect(rn.withdraw(ts[0])).To(BeFalse(), "a worker took it")
		Expect(rn.withdraw(ts[3])).To(BeTrue(), "a queued one is taken out (cancelled)")
		rn.release(ts[0])
		Expect(admitted(ts[2])).To(BeTrue(), "the oldest waiting task takes the freed worker")
		Expect(rn.db.queue.waiting).To(BeEmpty())
		Expect(rn.db.queue.running).To(Equal(2))
	})

	It("gives the dedicated status worker the oldest urgent task alone, and the others every task by age", func() {
		rn := &runner{db: &store{queue: taskQueue{workers: 3, status: true}}}
		deploy := func(id int) *task { return &task{id: id, kind: kindDeploy, admit: make(chan struct{})} }
		vms := func(id int) *task { return &task{id: id, kind: kindVMState, admit: make(chan struct{})} }
		ts := []*task{deploy(1), deploy(2), deploy(3), vms(4), vms(5)}
		for _, t := range ts {
			rn.db.queue.enqueueLocked(t)
		}
		Expect([]bool{admitted(ts[0]), admitted(ts[1]), admitted(ts[2]), admitted(ts[3]), admitted(ts[4])}).
			To(Equal([]bool{true, true, false, true, false}), "two general workers take the deploys by age, the status worker the first vm-state task")
		Expect(ts[3].statusWorker).To(BeTrue())

		rn.release(ts[3])
		Expect(admitted(ts[4])).To(BeTrue(), "the status worker takes the next urgent task, past an older deploy")
		Expect(admitted(ts[2])).To(BeFalse(), "a deploy never goes to the status worker")
		rn.release(ts[0])
		Expect(admitted(ts[2])).To(BeTrue())
	})

	It("serves both queues by age on every worker without the dedicated worker, as the Director's default", func() {
		rn := &runner{db: &store{queue: taskQueue{workers: 1, status: true}}} // one worker: no dedicated one, as bpm.yml decides
		vmsTask := &task{id: 1, kind: kindVMState, admit: make(chan struct{})}
		deploy := &task{id: 2, kind: kindDeploy, admit: make(chan struct{})}
		rn.db.queue.enqueueLocked(vmsTask)
		rn.db.queue.enqueueLocked(deploy)
		Expect(admitted(vmsTask)).To(BeTrue())
		Expect(admitted(deploy)).To(BeFalse(), "a deploy waits behind a vm-state task that came first")
		rn.release(vmsTask)
		Expect(admitted(deploy)).To(BeTrue())
	})
})
