package upgrade_test

import (
	"context"
	"fmt"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/upgrade"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// fakeFleet answers each attempt with the next outcome scripted for its
// instance (upgraded when none is left) and records the order of the
// attempts and the overlap of their deploys. A deploy holds its slot until
// the fleet has settled: every attempt the Roll started is deploying or
// waits for a slot that max_in_flight deploys hold, so that the most that
// deploy at once is reached whatever the scheduler does.
type fakeFleet struct {
	mu      sync.Mutex
	script  map[string][]string
	order   []string // instance ids as their attempts began
	now     int
	most    int
	canary  map[string]bool
	endedAt map[string]int // when (in attempts begun) each first ended

	slots   int           // max_in_flight; 0: a deploy holds its slot for no one
	started int           // attempts the Roll started (told by its Progress)
	taking  int           // attempts waiting for a slot
	over    int           // attempts that returned
	changed chan struct{} // closed, and replaced, at each change of the counts above
}

// newFakeFleet answers script; slots is max_in_flight (0: no Roll's Progress
// tells it of the attempts started, and a deploy waits for no one).
func newFakeFleet(script map[string][]string, slots int) *fakeFleet {
	if script == nil {
		script = map[string][]string{}
	}
	return &fakeFleet{script: script, canary: map[string]bool{}, endedAt: map[string]int{}, slots: slots,
		changed: make(chan struct{})}
}

// tell wakes the deploys waiting for the fleet to settle; f.mu held.
func (f *fakeFleet) tell() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// progress counts the attempts the Roll starts.
func (f *fakeFleet) progress(_ int, r report.UpgradeResult) {
	if r.State != report.UpgradeInFlight {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.started++
	f.tell()
}

// settle waits until every attempt started deploys, or waits for a slot
// that max_in_flight deploys hold; f.mu held.
func (f *fakeFleet) settle() {
	GinkgoHelper()
	if f.slots == 0 {
		return
	}
	for f.started-f.over-f.now-f.taking > 0 || (f.taking > 0 && f.now < f.slots) {
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-changed:
		case <-time.After(time.Minute):
			f.mu.Lock()
			Fail(fmt.Sprintf("the fleet never settled: %d started, %d over, %d deploying, %d waiting for a slot",
				f.started, f.over, f.now, f.taking))
		}
		f.mu.Lock()
	}
}

// attempt is the Roll's Attempt: it takes its slot, deploys until the
// fleet settles, and answers the outcome scripted.
func (f *fakeFleet) attempt(ctx context.Context, c upgrade.Candidate, canary bool, slot upgrade.Slot) report.UpgradeResult {
	defer GinkgoRecover()
	f.mu.Lock()
	f.order = append(f.order, c.InstanceID)
	f.taking++
	f.tell()
	f.mu.Unlock()
	why := slot.Take(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.taking--
	defer f.tell()
	if why != "" {
		f.over++
		return report.UpgradeResult{InstanceID: c.InstanceID, State: report.UpgradePending, Reason: why}
	}
	f.now++
	f.most = max(f.most, f.now)
	if canary {
		f.canary[c.InstanceID] = true
	}
	state := report.UpgradeUpgraded
	if s := f.script[c.InstanceID]; len(s) > 0 {
		state, f.script[c.InstanceID] = s[0], s[1:]
	}
	f.tell()
	f.settle()
	f.now--
	f.over++
	if _, ok := f.endedAt[c.InstanceID]; !ok {
		f.endedAt[c.InstanceID] = len(f.order)
	}
	return report.UpgradeResult{InstanceID: c.InstanceID, State: state, Reason: "scripted"}
}

func candidates(n int) []upgrade.Candidate {
	out := make([]upgrade.Candidate, n)
	for i := range out {
		out[i] = upgrade.Candidate{InstanceID: fmt.Sprintf("i%d", i), To: "2.0.0"}
	}
	return out
}

func roll(rules report.UpgradeRules, n int, script map[string][]string, gate func() string) (*fakeFleet, []report.UpgradeResult, string) {
	f := newFakeFleet(script, max(rules.MaxInFlight, 1))
	if rules.RetryDelay == 0 {
		rules.RetryDelay = time.Millisecond
	}
	res, stopped := upgrade.Roll{Rules: rules, Attempt: f.attempt, Gate: gate, Progress: f.progress}.Run(context.Background(), candidates(n))
	return f, res, stopped
}

func byState(res []report.UpgradeResult) map[string]int {
	out := map[string]int{}
	for _, r := range res {
		out[r.State]++
	}
	return out
}

var _ = Describe("the fleet rules", func() {
	It("upgrades the canaries first, alone, then the rest within max_in_flight", func() {
		f, res, stopped := roll(report.UpgradeRules{Canaries: 2, MaxInFlight: 3}, 10, nil, nil)
		Expect(stopped).To(BeEmpty())
		Expect(byState(res)).To(Equal(map[string]int{report.UpgradeUpgraded: 10}))
		Expect(f.order[:2]).To(ConsistOf("i0", "i1"), "in the list's order")
		Expect(f.canary).To(Equal(map[string]bool{"i0": true, "i1": true}))
		Expect(res[0].Canary && res[1].Canary && !res[2].Canary).To(BeTrue())
		Expect(f.endedAt["i0"]).To(BeNumerically("<=", 2), "no other began before the canaries ended")
		Expect(f.endedAt["i1"]).To(BeNumerically("<=", 2))
		Expect(f.most).To(Equal(3), "max_in_flight at once, never more")
	})

	It("starts nothing after a canary failed; the others stay pending with the reason", func() {
		_, res, stopped := roll(report.UpgradeRules{Canaries: 1, MaxInFlight: 5}, 4, map[string][]string{"i0": {report.UpgradeRolledBack}}, nil)
		Expect(stopped).To(ContainSubstring("canary i0 rolled_back"))
		Expect(byState(res)).To(Equal(map[string]int{report.UpgradeRolledBack: 1, report.UpgradePending: 3}))
		Expect(res[3].Reason).To(Equal(stopped))
	})

	It("takes the next instance as the canary when one is skipped or only recorded", func() {
		f, res, _ := roll(report.UpgradeRules{Canaries: 1, MaxInFlight: 5}, 4,
			map[string][]string{"i0": {report.UpgradeSkipped}, "i1": {report.UpgradeUnchanged}}, nil)
		Expect(f.canary).To(Equal(map[string]bool{"i0": true, "i1": true, "i2": true}))
		Expect(byState(res)).To(Equal(map[string]int{report.UpgradeSkipped: 1, report.UpgradeUnchanged: 1, report.UpgradeUpgraded: 2}))
	})

	It("stops starting once max_failures failed, and lets the ones under way finish", func() {
		script := map[string][]string{"i1": {report.UpgradeFailed}, "i2": {report.UpgradeRollbackFailed}}
		_, res, stopped := roll(report.UpgradeRules{MaxInFlight: 1, MaxFailures: 2}, 6, script, nil)
		Expect(stopped).To(ContainSubstring("2 upgrades failed (max_failures 2)"))
		Expect(byState(res)).To(Equal(map[string]int{report.UpgradeUpgraded: 1, report.UpgradeFailed: 1, report.UpgradeRollbackFailed: 1, report.UpgradePending: 3}))
	})

	It("prepares the next ones while max_in_flight deploy, and lets none of them deploy once max_failures failed", func() {
		// i0 and i1 are prepared at once and either may deploy first: both would fail.
		script := map[string][]string{"i0": {report.UpgradeRolledBack}, "i1": {report.UpgradeRolledBack}}
		f, res, stopped := roll(report.UpgradeRules{MaxInFlight: 1, MaxFailures: 1}, 6, script, nil)
		Expect(stopped).To(ContainSubstring("max_failures 1"))
		Expect(byState(res)).To(Equal(map[string]int{report.UpgradeRolledBack: 1, report.UpgradePending: 5}),
			"the one prepared while the other deployed did not deploy after it failed")
		Expect(f.order).To(HaveLen(2), "one prepared ahead, no more")
		Expect(f.most).To(Equal(1))
	})

	It("goes through every failure with max_failures 0", func() {
		script := map[string][]string{"i1": {report.UpgradeFailed}, "i2": {report.UpgradeFailed}, "i3": {report.UpgradeRolledBack}}
		_, res, stopped := roll(report.UpgradeRules{MaxInFlight: 2}, 5, script, nil)
		Expect(stopped).To(BeEmpty())
		Expect(byState(res)).To(Equal(map[string]int{report.UpgradeUpgraded: 2, report.UpgradeFailed: 2, report.UpgradeRolledBack: 1}))
	})

	// "busy" is the state an attempt answers when the instance's operation is in progress.
	It("tries a busy instance again after the others, up to attempt_limit, then skips it", func() {
		script := map[string][]string{"i0": {"busy", "busy", "busy"}, "i1": {"busy"}}
		// Canaries go one at a time: the order is the fleet's, not the scheduler's.
		f, res, _ := roll(report.UpgradeRules{Canaries: 10, MaxInFlight: 1, AttemptLimit: 3}, 3, script, nil)
		Expect(res[0].State).To(Equal(report.UpgradeSkipped))
		Expect(res[0].Attempts).To(Equal(3))
		Expect(res[0].Reason).To(ContainSubstring("busy at each of 3 attempts"))
		Expect(res[1].State).To(Equal(report.UpgradeUpgraded), "busy once, then upgraded")
		Expect(res[1].Attempts).To(Equal(2))
		Expect(f.order[:3]).To(Equal([]string{"i0", "i1", "i2"}), "the retries come after the list")
	})

	It("tries at most MaxInstances instances", func() {
		_, res, stopped := roll(report.UpgradeRules{MaxInFlight: 2, MaxInstances: 3}, 5, nil, nil)
		Expect(stopped).To(ContainSubstring("3 instances tried"))
		Expect(byState(res)).To(Equal(map[string]int{report.UpgradeUpgraded: 3, report.UpgradePending: 2}))
	})

	It("starts nothing once the gate closes", func() {
		var mu sync.Mutex
		calls := 0
		gate := func() string {
			mu.Lock()
			defer mu.Unlock()
			if calls++; calls > 2 {
				return "outside the upgrade window 02:00-04:00"
			}
			return ""
		}
		_, res, stopped := roll(report.UpgradeRules{Canaries: 10, MaxInFlight: 1}, 5, nil, gate) // one at a time
		Expect(stopped).To(Equal("outside the upgrade window 02:00-04:00"))
		Expect(byState(res)).To(Equal(map[string]int{report.UpgradeUpgraded: 2, report.UpgradePending: 3}))
	})

	It("starts nothing once its context ended", func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		f := newFakeFleet(nil, 0)
		res, stopped := upgrade.Roll{Rules: report.UpgradeRules{MaxInFlight: 1}, Attempt: f.attempt}.Run(ctx, candidates(2))
		Expect(stopped).To(HavePrefix("stopped: context canceled"))
		Expect(byState(res)).To(Equal(map[string]int{report.UpgradePending: 2}))
	})
})
