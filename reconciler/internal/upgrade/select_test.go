package upgrade_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/upgrade"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("selecting the instances of a fleet upgrade", func() {
	cat := &catalog.Catalog{Services: []catalog.Service{
		{ID: "redis", Plans: []catalog.Plan{
			{ID: "small", ServiceID: "redis", MaintenanceInfo: &catalog.MaintenanceInfo{Version: "2.0.0"}},
			{ID: "plain", ServiceID: "redis"},
		}},
		{ID: "pg", Plans: []catalog.Plan{{ID: "pg", ServiceID: "pg", MaintenanceInfo: &catalog.MaintenanceInfo{Version: "1.0.0"}}}},
	}}
	index := map[string]*vault.Record{
		"a-none":     {ServiceID: "redis", PlanID: "small"},
		"b-old":      {ServiceID: "redis", PlanID: "small", MaintenanceVersion: "1.0.0"},
		"c-older":    {ServiceID: "redis", PlanID: "small", MaintenanceVersion: "0.9.0", Director: "two"},
		"d-current":  {ServiceID: "redis", PlanID: "small", MaintenanceVersion: "2.0.0"},
		"e-newer":    {ServiceID: "redis", PlanID: "small", MaintenanceVersion: "2.1.0"},
		"f-plain":    {ServiceID: "redis", PlanID: "plain"},
		"g-orphan":   {ServiceID: "redis", PlanID: "small", Orphaned: true},
		"h-adopted":  {ServiceID: "redis", PlanID: "small", Adopted: true},
		"i-quar":     {ServiceID: "redis", PlanID: "small", MaintenanceVersion: "1.0.0"},
		"j-pg":       {ServiceID: "pg", PlanID: "pg", MaintenanceVersion: "0.1.0"},
		"k-gone-cat": {ServiceID: "x", PlanID: "unknown"},
	}
	quarantined := func(id string) string {
		if id == "i-quar" {
			return "quarantined until later"
		}
		return ""
	}
	ids := func(cs []upgrade.Candidate) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.InstanceID)
		}
		return out
	}
	settled := func(rs []report.UpgradeResult) map[string]string {
		out := map[string]string{}
		for _, r := range rs {
			out[r.InstanceID] = r.State + ": " + r.Reason
		}
		return out
	}

	DescribeTable("takes the outdated ones in scope, oldest version first, and says why it sets others aside",
		func(scope report.UpgradeScope, want []string, aside map[string]string) {
			sel := upgrade.Select(index, cat, scope, "one", quarantined)
			Expect(ids(sel.Candidates)).To(Equal(want))
			got := settled(sel.Settled)
			Expect(got).To(HaveLen(len(aside)))
			for id, prefix := range aside {
				Expect(got).To(HaveKeyWithValue(id, HavePrefix(prefix)))
			}
		},
		Entry("everything", report.UpgradeScope{}, []string{"a-none", "j-pg", "c-older", "b-old"},
			map[string]string{"g-orphan": "skipped: orphaned", "h-adopted": "skipped: adopted", "i-quar": "skipped: quarantined until later"}),
		Entry("a service", report.UpgradeScope{Service: "pg"}, []string{"j-pg"}, map[string]string{}),
		Entry("a plan", report.UpgradeScope{Plan: "small"}, []string{"a-none", "c-older", "b-old"},
			map[string]string{"g-orphan": "skipped", "h-adopted": "skipped", "i-quar": "skipped"}),
		Entry("a Director (a record naming none lives on the first)", report.UpgradeScope{Director: "two"}, []string{"c-older"}, map[string]string{}),
		Entry("the first Director", report.UpgradeScope{Director: "one", Service: "pg"}, []string{"j-pg"}, map[string]string{}),
		Entry("named ids: tried whatever their quarantine, the others said why",
			report.UpgradeScope{Instances: []string{"i-quar", "d-current", "f-plain", "k-gone-cat", "z-none"}}, []string{"i-quar"},
			map[string]string{"d-current": "current", "f-plain": "skipped: its plan declares no maintenance_info",
				"k-gone-cat": "skipped: its plan is not in the catalog", "z-none": "skipped: the index has no record"}),
	)

	It("carries what the index says of each", func() {
		sel := upgrade.Select(index, cat, report.UpgradeScope{Instances: []string{"c-older"}}, "one", nil)
		Expect(sel.Candidates).To(Equal([]upgrade.Candidate{{InstanceID: "c-older", Deployment: "small-c-older", Director: "two",
			ServiceID: "redis", PlanID: "small", From: "0.9.0", To: "2.0.0"}}))
	})
})
