package bosh_test

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
)

var _ = Describe("errands", func() {
	It("runs an errand in a task and reads each instance's run from its result output", func() {
		d := startDirector(sim.Options{TaskDuration: -1, Errands: []sim.ErrandOutcome{
			{Errand: "smoke-tests", ExitCode: 3, Stdout: "2 of 3 checks", Stderr: "check 3: connection refused"}}})
		c := newClient(d)
		Expect(d.PutDeployment(manifest("redis-1"))).To(Succeed())
		ctx := bosh.WithContextID(ctxFor(10*time.Second), "blacksmith-errand-1")
		task, err := c.RunErrand(ctx, "redis-1", "smoke-tests", bosh.ErrandRun{})
		Expect(err).NotTo(HaveOccurred())
		Expect(task.ContextID).To(Equal("blacksmith-errand-1"))
		task, err = c.WaitTask(ctx, task.ID, 10*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(task.Succeeded()).To(BeTrue(), "an errand that exits non-zero still ends its task done: %+v", task)
		results, err := c.ErrandResults(ctx, task.ID)
		Expect(err).NotTo(HaveOccurred())
		Expect(results).To(HaveLen(1))
		r := results[0]
		Expect(r.Instance.Group).To(Equal("smoke-tests"))
		Expect(r.ErrandName).To(Equal("smoke-tests"))
		Expect(r.ExitCode).To(Equal(3))
		Expect(r.Succeeded()).To(BeFalse())
		Expect(r.Stdout).To(Equal("2 of 3 checks"))
		Expect(r.Stderr).To(Equal("check 3: connection refused"))
		Expect(r.Logs.BlobstoreID).NotTo(BeEmpty())
	})

	It("reads no result of a run skipped because nothing changed", func() {
		d := startDirector(sim.Options{TaskDuration: -1})
		c := newClient(d)
		Expect(d.PutDeployment(manifest("redis-1"))).To(Succeed())
		ctx := ctxFor(10 * time.Second)
		for i, want := range []int{1, 0} {
			task, err := c.RunErrand(ctx, "redis-1", "smoke-tests", bosh.ErrandRun{WhenChanged: true})
			Expect(err).NotTo(HaveOccurred())
			task, err = c.WaitTask(ctx, task.ID, 10*time.Millisecond)
			Expect(err).NotTo(HaveOccurred())
			results, err := c.ErrandResults(ctx, task.ID)
			Expect(err).NotTo(HaveOccurred())
			Expect(results).To(HaveLen(want), "run %d", i)
		}
	})

	It("ends the task in error for an errand the deployment does not have, and refuses an empty name unsent", func() {
		d := startDirector(sim.Options{TaskDuration: -1})
		c := newClient(d)
		Expect(d.PutDeployment(manifest("redis-1"))).To(Succeed())
		ctx := ctxFor(10 * time.Second)
		task, err := c.RunErrand(ctx, "redis-1", "no-such-errand", bosh.ErrandRun{})
		Expect(err).NotTo(HaveOccurred())
		task, _ = c.WaitTask(ctx, task.ID, 10*time.Millisecond)
		Expect(task.State).To(Equal("error"))
		Expect(task.Result).To(ContainSubstring("no-such-errand"))
		d.ResetStats()
		_, err = c.RunErrand(context.Background(), "", "smoke-tests", bosh.ErrandRun{})
		Expect(err).To(HaveOccurred())
		Expect(d.Stats().Requests).To(BeEmpty())
	})
})

// ParseErrandResults reads the result lines, refuses what is not one, and
// bounds how many it takes.
var _ = DescribeTable("ParseErrandResults",
	func(body string, n int, wantErr string) {
		out, err := bosh.ParseErrandResults([]byte(body))
		if wantErr != "" {
			Expect(err).To(MatchError(ContainSubstring(wantErr)))
			return
		}
		Expect(err).NotTo(HaveOccurred())
		Expect(out).To(HaveLen(n))
	},
	Entry("none", "", 0, ""),
	Entry("two, a blank line between", `{"errand_name":"e","exit_code":0}`+"\n\n"+`{"errand_name":"e","exit_code":1}`+"\n", 2, ""),
	Entry("not JSON", "Task 5 done\n", 0, "line 1"),
	Entry("a list", "[]\n", 0, "line 1"),
)

var _ = It("ParseErrandResults takes at most one result per instance a run can have", func() {
	var body []byte
	for range 10_001 {
		body = append(body, `{"exit_code":0}`+"\n"...)
	}
	_, err := bosh.ParseErrandResults(body)
	Expect(err).To(HaveOccurred())
	Expect(errors.Unwrap(err)).NotTo(BeNil())
})

var _ = DescribeTable("an errand run's standard error, quoted by its end",
	func(stderr string, n int, want string) {
		Expect(bosh.ErrandResult{Stderr: stderr}.StderrTail(n)).To(Equal(want))
	},
	Entry("whole when short, trimmed", "  boom\n", 10, "boom"),
	Entry("its end when long, marked cut", "0123456789abcdef", 6, "...abcdef"),
	Entry("cut at a character's start", "xx\u00e9\u00e9", 3, "...\u00e9"),
	Entry("control characters made spaces, newlines and tabs kept", "a\x1b[31mred\tb\nc", 100, "a [31mred\tb\nc"),
)
