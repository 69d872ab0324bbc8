package run_test

import (
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/run"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var _ = Describe("the run's pure rules", func() {
	start := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	inProgress := &vault.Operation{Type: "update", State: vault.OperationInProgress}

	DescribeTable("a record whose deployment is gone may be flagged orphaned",
		func(rec vault.Record, grace time.Duration, want bool) {
			Expect(run.MayOrphan(&rec, start, grace)).To(Equal(want))
		},
		Entry("created long ago", vault.Record{Created: start.Add(-time.Hour).Unix()}, 10*time.Minute, true),
		Entry("within the grace period after its creation", vault.Record{Created: start.Add(-time.Minute).Unix()}, 10*time.Minute, false),
		Entry("no creation time: past any grace", vault.Record{}, 10*time.Minute, true),
		Entry("the broker's operation in progress", vault.Record{LastOperation: inProgress}, time.Duration(0), false),
		Entry("the broker's operation ended", vault.Record{LastOperation: &vault.Operation{Type: "update", State: "succeeded"}}, time.Duration(0), true),
	)

	It("lists the operations stuck past the bound, oldest first, those of unknown age among them", func() {
		op := func(ago time.Duration) *vault.Operation {
			return &vault.Operation{Type: "provision", State: vault.OperationInProgress, StartedAt: start.Add(-ago).Format(time.RFC3339)}
		}
		index := map[string]*vault.Record{
			"recent":  {LastOperation: op(10 * time.Minute)},
			"old":     {LastOperation: op(3 * time.Hour)},
			"older":   {LastOperation: op(5 * time.Hour)},
			"unknown": {LastOperation: &vault.Operation{Type: "update", State: vault.OperationInProgress}},
			"done":    {LastOperation: &vault.Operation{Type: "update", State: "succeeded", StartedAt: "2020-01-01T00:00:00Z"}},
		}
		Expect(run.StuckOperations(index, start, time.Hour)).To(Equal([]string{"unknown", "older", "old"}))
	})

	DescribeTable("the bindings' check goes through the fleet in turn, round to the start, each at most once",
		func(cursor string, n int, want []string) {
			Expect(run.Turn([]string{"a", "b", "c", "d", "e"}, cursor, n)).To(Equal(want))
		},
		Entry("from the start", "", 2, []string{"a", "b"}),
		Entry("after the cursor", "b", 2, []string{"c", "d"}),
		Entry("round to the start", "d", 3, []string{"e", "a", "b"}),
		Entry("a cursor no longer there", "bb", 2, []string{"c", "d"}),
		Entry("the last id: from the start", "e", 2, []string{"a", "b"}),
		Entry("more than there are: each once", "c", 10, []string{"d", "e", "a", "b", "c"}),
	)
})
