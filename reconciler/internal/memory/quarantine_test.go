package memory_test

import (
	"errors"
	"fmt"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/guard"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("the backoff policy", func() {
	p := memory.Policy{Attempts: 2, Delay: 10 * time.Millisecond,
		Quarantine: config.QuarantineConfig{Backoff: 15 * time.Minute, MaxBackoff: 24 * time.Hour}}

	DescribeTable("waits between runs: doubling per failed run, up to the most",
		func(failures int, want time.Duration) { Expect(p.QuarantineWait(failures)).To(Equal(want)) },
		Entry("the first failed run", 1, 15*time.Minute),
		Entry("the second", 2, 30*time.Minute),
		Entry("the seventh: 16 h", 7, 16*time.Hour),
		Entry("the eighth: capped", 8, 24*time.Hour),
	)

	It("waits within a run on the same curve, from retry_delay, with jitter", func() {
		Expect(p.Round(1)).To(BeNumerically("~", 7500*time.Microsecond, 2500*time.Microsecond))
		Expect(p.Round(3)).To(BeNumerically("~", 30*time.Millisecond, 10*time.Millisecond))
	})

	It("gives a deployment Attempts later rounds, none for what cannot pass", func() {
		r := memory.NewRounds(p)
		d := bosh.Deployment{Name: "d"}
		Expect(r.Later(ctx, d, errors.New("503"))).To(BeTrue())
		Expect(r.Later(ctx, d, errors.New("503"))).To(BeTrue())
		Expect(r.Later(ctx, d, errors.New("503"))).To(BeFalse(), "attempts spent")
		Expect(r.Later(ctx, bosh.Deployment{Name: "e"}, guard.ErrCircuitOpen)).To(BeFalse())
		Expect(r.Next()).To(Equal([]bosh.Deployment{d, d}))
		Expect(r.Next()).To(BeEmpty())
	})
})

var _ = Describe("the quarantine", func() {
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	p := memory.Policy{Quarantine: config.QuarantineConfig{Backoff: 15 * time.Minute, MaxBackoff: time.Hour}}
	all := func(string) bool { return true }
	noInstance := func(string) string { return "" }

	It("sets a failed item aside, skips it until its backoff expires, and releases it once it goes through", func() {
		q := memory.NewQuarantine(p, start, report.RunOptions{})
		ch := q.Settle(start, map[string]string{"deployment d": "boom"}, nil, map[string]bool{"d": true}, noInstance, all)
		Expect(ch.Added).To(HaveLen(1))
		Expect(ch.Added[0].NextAttempt).To(Equal(start.Add(15 * time.Minute)))

		q2 := memory.NewQuarantine(p, start.Add(10*time.Minute), report.RunOptions{})
		load(q2, q)
		Expect(q2.Skip("deployment d", "")).To(BeTrue(), "within its backoff")
		ch = q2.Settle(start.Add(10*time.Minute), nil, nil, map[string]bool{"d": true}, noInstance, all)
		Expect(ch.Empty()).To(BeTrue(), "skipped: neither released nor quarantined again")

		q3 := memory.NewQuarantine(p, start.Add(20*time.Minute), report.RunOptions{})
		load(q3, q)
		Expect(q3.Skip("deployment d", "")).To(BeFalse(), "its backoff expired: tried")
		ch = q3.Settle(start.Add(20*time.Minute), map[string]string{"deployment d": "boom again"}, nil, map[string]bool{"d": true}, noInstance, all)
		Expect(ch.Added[0].Failures).To(Equal(2))
		Expect(ch.Added[0].NextAttempt).To(Equal(start.Add(20*time.Minute + 30*time.Minute)))

		q4 := memory.NewQuarantine(p, start.Add(time.Hour), report.RunOptions{})
		load(q4, q3)
		ch = q4.Settle(start.Add(time.Hour), nil, nil, map[string]bool{"d": true}, noInstance, all)
		Expect(ch.Released).To(HaveLen(1), "tried and in step")
		Expect(q4.List()).To(BeEmpty())
	})

	It("stays within a state document's bounds: while full, a new failure is not quarantined nor announced", func() {
		hostile := strings.Repeat("<\u202e&", 100_000)
		failed, listed := map[string]string{}, map[string]bool{}
		for i := range 5000 {
			name := fmt.Sprintf("%s-%0200d", "d", i)
			failed["deployment "+name], listed[name] = hostile, true
		}
		q := memory.NewQuarantine(p, start, report.RunOptions{})
		ch := q.Settle(start, failed, nil, listed, noInstance, all)
		st := &stateDocs{docs: map[string][]byte{}}
		Expect(q.Save(ctx, st)).To(Succeed())
		Expect(len(st.docs["quarantine"])).To(BeNumerically("<=", vault.MaxStateBytes))
		Expect(ch.Added).To(HaveLen(len(q.List())), "only what is kept is announced")
		Expect(len(q.List())).To(BeNumerically(">", 50))
		Expect(len(q.List()[0].LastError)).To(BeNumerically("<=", 260))

		q2 := memory.NewQuarantine(p, start.Add(time.Hour), report.RunOptions{}) // every one tried and failing again
		load(q2, q)
		ch = q2.Settle(start.Add(time.Hour), failed, nil, listed, noInstance, all)
		Expect(q2.Save(ctx, st)).To(Succeed())
		Expect(len(st.docs["quarantine"])).To(BeNumerically("<=", vault.MaxStateBytes))
		Expect(ch.Added).To(HaveLen(len(q.List())), "those kept, again; none new")
	})

	It("neither quarantines nor releases an excused failure (the Directors were failing), and counts no failed run for it", func() {
		q := memory.NewQuarantine(p, start, report.RunOptions{})
		listed := map[string]bool{"d": true, "e": true}
		ch := q.Settle(start, map[string]string{"deployment d": "503", "deployment e": "503"}, map[string]bool{"deployment d": true, "deployment e": true},
			listed, noInstance, all)
		Expect(ch.Empty()).To(BeTrue())
		q.Settle(start, map[string]string{"deployment d": "its own fault"}, nil, listed, noInstance, all)
		later := memory.NewQuarantine(p, start.Add(20*time.Minute), report.RunOptions{})
		load(later, q)
		ch = later.Settle(start.Add(20*time.Minute), map[string]string{"deployment d": "503"}, map[string]bool{"deployment d": true}, listed, noInstance, all)
		Expect(ch.Empty()).To(BeTrue(), "kept as it was: not released, no second failed run")
		Expect(later.Item("deployment d").Failures).To(Equal(1))
	})

	It("tries an item the operator names, and leaves alone what the run did not consider", func() {
		q := memory.NewQuarantine(p, start, report.RunOptions{})
		q.Settle(start, map[string]string{"instance i1": "boom", "deployment gone": "x"}, nil, map[string]bool{"gone": true}, noInstance, all)
		forced := memory.NewQuarantine(p, start, report.RunOptions{Instances: []string{"i1"}})
		load(forced, q)
		Expect(forced.Skip("instance i1", "i1")).To(BeFalse())
		Expect(forced.Skip("deployment gone", "")).To(BeTrue())
		ch := forced.Settle(start, nil, nil, map[string]bool{}, noInstance, func(key string) bool { return key != "deployment gone" })
		Expect(ch.Released).To(ConsistOf(HaveField("InstanceID", "i1")))
		Expect(forced.Item("deployment gone")).NotTo(BeNil(), "not considered: kept although no longer listed")
	})
})

// load copies q's items into into, as a later run reads them from Vault.
func load(into, from *memory.Quarantine) {
	GinkgoHelper()
	st := &stateDocs{docs: map[string][]byte{}}
	Expect(from.Save(ctx, st)).To(Succeed())
	Expect(into.Load(ctx, st)).To(Succeed())
}

var _ = DescribeTable("a storm of the Directors' transient faults",
	func(transient, listed int, want bool) { Expect(memory.Storm(transient, listed)).To(Equal(want)) },
	Entry("one deployment failing among eight", 1, 8, false),
	Entry("two among eight", 2, 8, true),
	Entry("two among a thousand: 0.2%", 2, 1000, false),
	Entry("fifty among a thousand: 5%", 50, 1000, true),
	Entry("none", 0, 10, false),
)
