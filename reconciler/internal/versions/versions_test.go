package versions_test

import (
	"fmt"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/versions"
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
