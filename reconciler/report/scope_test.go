package report_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("a scope", func() {
	owner := report.Owner{Instance: "i1", Service: "redis", Plan: "redis-small"}

	DescribeTable("covers a deployment by its name and what is known of its owner",
		func(s report.Scope, name string, known bool, want bool) {
			Expect(s.Covers(name, owner, known)).To(Equal(want))
		},
		Entry("everything", report.Scope{}, "any", false, true),
		Entry("its deployment by name, owner unknown", report.Scope{Deployment: "d"}, "d", false, true),
		Entry("another deployment", report.Scope{Deployment: "d"}, "e", true, false),
		Entry("its instance", report.Scope{Instance: "i1"}, "d", true, true),
		Entry("another instance", report.Scope{Instance: "i2"}, "d", true, false),
		Entry("an owner nobody knows is out of an instance scope", report.Scope{Instance: "i1"}, "d", false, false),
		Entry("service and plan together", report.Scope{Service: "redis", Plan: "redis-small"}, "d", true, true),
		Entry("the right service, another plan", report.Scope{Service: "redis", Plan: "redis-large"}, "d", true, false),
	)

	DescribeTable("covers an index record",
		func(s report.Scope, want bool) {
			rec := &vault.Record{ServiceID: "redis", PlanID: "redis-small", DeploymentName: "redis-small-i1"}
			Expect(s.CoversRecord("i1", rec)).To(Equal(want))
		},
		Entry("everything", report.Scope{}, true),
		Entry("its deployment", report.Scope{Deployment: "redis-small-i1"}, true),
		Entry("another deployment", report.Scope{Deployment: "other"}, false),
		Entry("its plan", report.Scope{Plan: "redis-small"}, true),
		Entry("another service", report.Scope{Service: "postgresql"}, false),
	)

	It("reads as the query that selects it", func() {
		Expect(report.Scope{Service: "redis", Instance: "i1"}.String()).To(Equal("service=redis&instance=i1"))
		Expect(report.Scope{}.Empty()).To(BeTrue())
	})
})
