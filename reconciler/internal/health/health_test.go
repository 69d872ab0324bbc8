package health_test

import (
	"fmt"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
)

func yes() *bool { t := true; return &t }
func no() *bool  { f := false; return &f }

var _ = Describe("the sweep", func() {
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("redis-small-%04d", i)
	}

	It("checks every deployment once per sweep, shares differing by at most one", func() {
		s := health.Sweep{Period: 24 * time.Hour, Interval: time.Hour}
		Expect(s.Slots()).To(Equal(int64(24)))
		seen := map[string]int{}
		smallest, largest := len(names), 0
		for slot := int64(100); slot < 124; slot++ {
			share := s.Share(names, slot)
			smallest, largest = min(smallest, len(share)), max(largest, len(share))
			for _, n := range share {
				seen[n]++
			}
		}
		Expect(seen).To(HaveLen(len(names)))
		for n, c := range seen {
			Expect(c).To(Equal(1), n)
		}
		Expect(largest - smallest).To(BeNumerically("<=", 1))
		Expect(largest).To(Equal(42), "ceil(1000/24)")
		Expect(s.Share(names, 100)).To(Equal(s.Share(names, 124)), "the next sweep goes the same way")
	})

	It("keeps a deployment in its slot while the others stay, and sweeps nothing when off", func() {
		s := health.Sweep{Period: 4 * time.Hour, Interval: time.Hour}
		Expect(s.Share(names, 7)).To(Equal(s.Share(append([]string{}, names...), 7)))
		Expect(health.Sweep{Interval: time.Hour}.Share(names, 7)).To(BeEmpty())
		Expect(health.Sweep{Period: 30 * time.Minute, Interval: time.Hour}.Slots()).To(Equal(int64(1)))
		Expect(s.Slot(time.Unix(0, 0).Add(5*time.Hour + time.Minute))).To(Equal(int64(5)))
	})
})

var _ = Describe("judging and folding VM states", func() {
	states := []bosh.VMState{
		{ID: "a", Job: "redis", Index: 0, CID: "vm-1", JobState: "running", State: "started", Active: yes(),
			Processes: []bosh.ProcessState{{Name: "redis", State: "running"}}},
		{ID: "b", Job: "redis", Index: 1, CID: "vm-2", JobState: "failing", State: "started", Active: yes(),
			Processes: []bosh.ProcessState{{Name: "redis", State: "failing"}, {Name: "agent", State: "running"}}},
		{ID: "c", Job: "redis", Index: 2, CID: "vm-3", JobState: bosh.JobUnresponsiveAgent, State: "started"},
		{ID: "d", Job: "redis", Index: 3, CID: "vm-4", JobState: "stopped", State: "stopped"},
		{ID: "e", Job: "redis", Index: 4, CID: "vm-5", JobState: "failing", State: "started", Active: no()},
	}

	It("finds the started, active VMs that do not run, with their failing processes", func() {
		got := health.Judge(states)
		Expect(got).To(HaveLen(2))
		Expect(got["b"]).To(ConsistOf(health.VM{Instance: "redis/1 (b)", CID: "vm-2", JobState: "failing", Failing: []string{"redis"}}))
		Expect(got["c"]).To(ConsistOf(HaveField("JobState", "unresponsive agent")))
	})

	It("keeps since when, announces each transition once, and forgets what no longer exists", func() {
		t0 := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
		sick := []health.Observation{{Deployment: "d1", Instance: "i1", VMs: health.Judge(states)}}
		doc, tr := health.Apply(health.Doc{}, sick, t0)
		Expect(tr).To(ConsistOf(And(HaveField("Unhealthy", true), HaveField("Entry.InstanceID", "i1"))))
		Expect(doc.Unhealthy["i1"].Reason()).To(Equal("redis/1 (b): failing (redis); redis/2 (c): unresponsive agent"))

		again, tr := health.Apply(doc, sick, t0.Add(time.Hour))
		Expect(tr).To(BeEmpty())
		Expect(again.Unhealthy["i1"].Since).To(Equal(t0))
		Expect(again.Equal(doc)).To(BeTrue(), "checked again, nothing to write")

		well, tr := health.Apply(again, []health.Observation{{Deployment: "d1", Instance: "i1", VMs: health.Judge(states[:1])}}, t0.Add(2*time.Hour))
		Expect(tr).To(ConsistOf(And(HaveField("Unhealthy", false), HaveField("Entry.Since", t0))))
		Expect(well.Unhealthy).To(BeEmpty())

		Expect(again.Forget(func(string) bool { return false }).Unhealthy).To(BeEmpty())
	})

	It("bounds what a hostile answer can make it keep", func() {
		var many []bosh.VMState
		for i := range 100 {
			long := fmt.Sprintf("%0500d", i)
			many = append(many, bosh.VMState{ID: "x", Job: long, CID: long, JobState: long, State: "started"})
		}
		got := health.Judge(many)["x"]
		Expect(len(got)).To(BeNumerically("<=", 20))
		Expect(len(got[0].CID)).To(BeNumerically("<=", 200))
	})
})
