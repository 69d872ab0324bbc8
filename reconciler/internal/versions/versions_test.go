package versions_test

import (
	"encoding/json"
	"fmt"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/versions"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var cat = &catalog.Catalog{Services: []catalog.Service{{ID: "redis", Plans: []catalog.Plan{
	{ID: "small", ServiceID: "redis", MaintenanceInfo: &catalog.MaintenanceInfo{Version: "2.0.0"}},
	{ID: "plain", ServiceID: "redis"},
}}}}

func rec(plan, version string) *vault.Record {
	return &vault.Record{ServiceID: "redis", PlanID: plan, MaintenanceVersion: version}
}

var _ = Describe("outdated instances", func() {
	It("lists those behind their plan's version or without one, the oldest first, and leaves the others out", func() {
		orphan := rec("small", "1.0.0")
		orphan.Orphaned = true
		adopted := rec("small", "")
		adopted.Adopted = true
		got := versions.Outdated(map[string]*vault.Record{
			"a": rec("small", "1.9.0"), "b": rec("small", "2.0.0"), "c": rec("small", "2.1.0"), "d": adopted,
			"e": rec("plain", ""), "f": rec("gone", "1.0.0"), "g": orphan, "h": rec("small", "1.10.0"), "i": nil,
		}, cat)
		Expect(got).To(HaveLen(3))
		Expect([]string{got[0].InstanceID, got[1].InstanceID, got[2].InstanceID}).To(Equal([]string{"d", "a", "h"}))
		Expect(got[0]).To(And(HaveField("Adopted", true), HaveField("Want", "2.0.0"), HaveField("Deployment", "small-d")))
		Expect(versions.Outdated(map[string]*vault.Record{"a": rec("small", "1.0.0")}, nil)).To(BeEmpty())
	})

	It("counts every one by plan and lists the first 100", func() {
		var list []report.Outdated
		for i := range 150 {
			list = append(list, report.Outdated{InstanceID: fmt.Sprint(i), PlanID: "small"})
		}
		r := versions.Summarize(list)
		Expect(r.Count).To(Equal(150))
		Expect(r.ByPlan).To(Equal(map[string]int{"small": 150}))
		Expect(r.Instances).To(HaveLen(100))
		Expect(versions.Summarize(nil).Instances).To(BeEmpty())
	})

	It("announces an instance once per version its plan wants, and forgets those no longer behind", func() {
		a := report.Outdated{InstanceID: "a", Want: "2.0.0"}
		doc, fresh := versions.Announce(versions.Doc{}, []report.Outdated{a})
		Expect(fresh).To(ConsistOf(a))
		again, fresh := versions.Announce(doc, []report.Outdated{a})
		Expect(fresh).To(BeEmpty())
		Expect(again.Equal(doc)).To(BeTrue())
		a.Want = "2.1.0"
		_, fresh = versions.Announce(doc, []report.Outdated{a})
		Expect(fresh).To(ConsistOf(a))
		gone, _ := versions.Announce(doc, nil)
		Expect(gone.Announced).To(BeEmpty())
	})
})

var _ = Describe("the document of what was announced", func() {
	It("keeps the instances of a fleet-wide version bump within a state document's bounds, a few hundred a run, and reads back what it wrote", func() {
		var list []report.Outdated
		for i := range 100_000 {
			list = append(list, report.Outdated{InstanceID: fmt.Sprintf("%08d-0000-4000-8000-000000000000", i), Want: []string{"2.0.0", "2.1.0-rc.1"}[i%2]})
		}
		doc := versions.Doc{}
		told := 0
		for run := 0; ; run++ {
			next, fresh := versions.Announce(doc, list)
			Expect(len(fresh)).To(BeNumerically("<=", versions.MaxFreshPerRun), "run %d", run)
			told += len(fresh)
			data, err := json.Marshal(next)
			Expect(err).NotTo(HaveOccurred())
			Expect(len(data)).To(BeNumerically("<=", vault.MaxStateBytes), "run %d: %d bytes", run, len(data))
			var back versions.Doc
			Expect(json.Unmarshal(data, &back)).To(Succeed())
			Expect(back.Equal(next)).To(BeTrue())
			if len(fresh) == 0 {
				break
			}
			doc = back
		}
		Expect(told).To(Equal(versions.MaxAnnounced), "each told once, until the document is full")
		_, again := versions.Announce(doc, list)
		Expect(again).To(BeEmpty(), "none announced twice")
	})

	It("reads the documents written before (instance id to version)", func() {
		var doc versions.Doc
		Expect(json.Unmarshal([]byte(`{"announced":{"a":"2.0.0","b":"1.0.0"}}`), &doc)).To(Succeed())
		_, fresh := versions.Announce(doc, []report.Outdated{{InstanceID: "a", Want: "2.0.0"}, {InstanceID: "b", Want: "2.0.0"}})
		Expect(fresh).To(ConsistOf(HaveField("InstanceID", "b")), "a was told of 2.0.0 already; b of 1.0.0 only")
	})

	It("drops keys of the wrong shape", func() {
		var doc versions.Doc
		Expect(json.Unmarshal([]byte(`{"by_want":{"2.0.0":"0123456789abZZZZZZZZZZZZfedcba98"}}`), &doc)).To(Succeed())
		Expect(doc.Announced).To(Equal(map[string]string{"0123456789ab": "2.0.0"}))
	})
})

func FuzzDoc(f *testing.F) {
	f.Add([]byte(`{"by_want":{"2.0.0":"0123456789ab"}}`))
	f.Add([]byte(`{"announced":{"a":"1.0.0"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc versions.Doc
		if json.Unmarshal(data, &doc) != nil {
			return
		}
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		var back versions.Doc
		if err := json.Unmarshal(out, &back); err != nil || !back.Equal(doc) {
			t.Fatalf("round trip: %v %v %v", err, doc, back)
		}
	})
}
