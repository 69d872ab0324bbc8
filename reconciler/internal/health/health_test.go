package health_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

func yes() *bool { t := true; return &t }
func no() *bool  { f := false; return &f }

var _ = Describe("the sweep", func() {
	names := make([]string, 1000)
	for i := range names {
		names[i] = fmt.Sprintf("redis-small-%04d", i)
	}

	It("checks every deployment once per sweep, shares near n/slots", func() {
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
		Expect(smallest).To(BeNumerically(">=", 42*2/3))
		Expect(largest).To(BeNumerically("<=", 42*3/2), "about 1000/24, the hash's spread")
		Expect(s.Share(names, 100)).To(Equal(s.Share(names, 124)), "the next sweep goes the same way")
	})

	It("keeps a deployment in its slot whatever else comes and goes, and sweeps nothing when off", func() {
		s := health.Sweep{Period: 4 * time.Hour, Interval: time.Hour}
		share := s.Share(names, 7)
		shuffled := append([]string{}, names...)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		fewer := append(shuffled[:500:500], "a-new-deployment", "another")
		for _, n := range s.Share(fewer, 7) {
			if n != "a-new-deployment" && n != "another" {
				Expect(share).To(ContainElement(n), "%s kept its slot", n)
			}
		}
		Expect(s.Share(shuffled, 7)).To(Equal(share))
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
		{ID: "f", Job: "redis", Index: 5, CID: "vm-6", JobState: "starting", State: "started", Active: yes()},
	}

	It("finds the started, active VMs that do not run, with their failing processes", func() {
		got := health.Judge(states)
		Expect(got).To(HaveLen(2))
		Expect(got["b"]).To(ConsistOf(report.UnhealthyVM{Instance: "redis/1 (b)", CID: "vm-2", JobState: "failing", Failing: []string{"redis"}}))
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
		Expect(again.Unhealthy["i1"].CheckedAt).To(Equal(t0.Add(time.Hour)))
		Expect(again.Equal(doc)).To(BeFalse(), "checked again: when, written")
		same, _ := health.Apply(again, sick, t0.Add(time.Hour))
		Expect(same.Equal(again)).To(BeTrue())

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
		Expect(len(got)).To(BeNumerically("<=", 5))
		Expect(len(got[0].CID)).To(BeNumerically("<=", 128))
		e := report.UnhealthyInstance{VMs: got}
		Expect(len(e.Reason())).To(BeNumerically("<=", 1024))
		wide := health.Judge([]bosh.VMState{{ID: "y", Job: strings.Repeat("é", 150), State: "started", JobState: "failing"}})["y"][0]
		Expect(utf8.ValidString(wide.Instance)).To(BeTrue(), "cut on a character")
	})

	It("keeps the document within a state document's bounds, whatever the fleet and the Director say", func() {
		hostile := strings.Repeat("<\u202e&", 100)
		t0 := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
		observe := func(n int, text string) []health.Observation {
			obs := make([]health.Observation, n)
			for i := range obs {
				var states []bosh.VMState
				for j := range 20 {
					states = append(states, bosh.VMState{ID: fmt.Sprintf("vm-%d", j), Job: text, CID: text, JobState: text, State: "started",
						Processes: []bosh.ProcessState{{Name: text, State: "failing"}, {Name: text, State: "failing"}}})
				}
				id := fmt.Sprintf("6f1e2d3c-4b5a-4978-8a9b-%012d", i)
				obs[i] = health.Observation{Deployment: "redis-small-" + id, Instance: id, VMs: health.Judge(states)}
			}
			return obs
		}
		for _, text := range []string{"failing", hostile} {
			doc, told := health.Apply(health.Doc{}, observe(5000, text), t0)
			data, err := json.Marshal(doc)
			Expect(err).NotTo(HaveOccurred())
			Expect(len(data)).To(BeNumerically("<=", vault.MaxStateBytes))
			Expect(len(doc.Unhealthy)).To(BeNumerically(">", 0))
			Expect(told).To(HaveLen(len(doc.Unhealthy)), "what is not kept is not told either")
			again, told := health.Apply(doc, observe(5000, hostile), t0.Add(time.Hour)) // every entry grows
			data, err = json.Marshal(again)
			Expect(err).NotTo(HaveOccurred())
			Expect(len(data)).To(BeNumerically("<=", vault.MaxStateBytes))
			Expect(told).To(BeEmpty(), "nothing new is told while the document is full")
		}
	})
})
