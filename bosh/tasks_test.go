package bosh_test

import (
	"context"
	"runtime"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("Tasks", func() {
	var (
		d   *sim.Director
		c   *bosh.Client
		ctx context.Context
	)

	BeforeEach(func() {
		d = startDirector(sim.Options{TaskDuration: 50 * time.Millisecond})
		c = newClient(d)
		ctx = ctxFor(30 * time.Second)
	})

	DescribeTable("Terminal and Succeeded",
		func(state string, terminal, succeeded bool) {
			t := bosh.Task{State: state}
			Expect(t.Terminal()).To(Equal(terminal))
			Expect(t.Succeeded()).To(Equal(succeeded))
		},
		Entry(nil, bosh.TaskQueued, false, false),
		Entry(nil, bosh.TaskProcessing, false, false),
		Entry(nil, bosh.TaskCancelling, false, false),
		Entry(nil, bosh.TaskDone, true, true),
		Entry(nil, bosh.TaskError, true, false),
		Entry(nil, bosh.TaskCancelled, true, false),
		Entry(nil, bosh.TaskTimeout, true, false),
	)

	DescribeTable("WaitTask ends at every terminal state",
		func(state string) {
			Expect(d.EndNextTask("redis-w", state)).To(Succeed())
			task, err := c.Deploy(ctx, []byte(manifest("redis-w")))
			Expect(err).NotTo(HaveOccurred())
			ended, err := c.WaitTask(ctx, task.ID, 10*time.Millisecond)
			Expect(err).NotTo(HaveOccurred())
			Expect(ended.ID).To(Equal(task.ID))
			Expect(ended.State).To(Equal(state))
			Expect(ended.Succeeded()).To(BeFalse())
			Expect(ended.Result).NotTo(BeEmpty())
		},
		Entry("error", bosh.TaskError),
		Entry("cancelled", bosh.TaskCancelled),
		Entry("timeout", bosh.TaskTimeout),
	)

	It("sees a task that ends in error through its events", func() {
		d.FailNextTask("")
		task, err := c.Deploy(ctx, []byte(manifest("redis-x")))
		Expect(err).NotTo(HaveOccurred())
		ended, err := c.WaitTask(ctx, task.ID, 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(ended.State).To(Equal(bosh.TaskError))
		events, err := c.TaskEvents(ctx, task.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(events).To(ContainElement(HaveField("Error.Message", ended.Result)))
	})

	It("ends the wait of a task cancelled while it runs", func() {
		d.Knobs().SetTaskDuration(10 * time.Second)
		task, err := c.Deploy(ctx, []byte(manifest("redis-y")))
		Expect(err).NotTo(HaveOccurred())
		Eventually(func() (string, error) {
			t, err := c.Task(ctx, task.ID)
			return t.State, err
		}).Should(Equal(bosh.TaskProcessing))
		Expect(d.CancelTask(task.ID)).To(Succeed())
		ended, err := c.WaitTask(ctx, task.ID, 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(ended.State).To(Equal(bosh.TaskCancelled))
	})

	It("stops waiting when its context ends, leaving no goroutine behind", func() {
		d.Knobs().SetTaskDuration(10 * time.Second)
		task, err := c.Deploy(ctx, []byte(manifest("redis-z")))
		Expect(err).NotTo(HaveOccurred())
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		last, err := c.WaitTask(short, task.ID, 20*time.Millisecond)
		Expect(err).To(MatchError(context.DeadlineExceeded))
		Expect(time.Since(start)).To(BeNumerically("<", 2*time.Second))
		Expect(last.ID).To(Equal(task.ID))
		Expect(last.State).To(BeElementOf(bosh.TaskQueued, bosh.TaskProcessing))
		Eventually(goroutinesIn).WithArguments("bosh.(*Client).WaitTask").Should(BeZero())
	})

	It("returns ErrTaskNotFound from WaitTask for an unknown task", func() {
		_, err := c.WaitTask(ctx, 424242, 10*time.Millisecond)
		Expect(err).To(MatchError(bosh.ErrTaskNotFound))
	})
})

// goroutinesIn counts the goroutines whose stack has a frame of function fn.
func goroutinesIn(fn string) int {
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	n := 0
	for _, g := range strings.Split(stacks, "\n\n") {
		if strings.Contains(g, fn) {
			n++
		}
	}
	return n
}
