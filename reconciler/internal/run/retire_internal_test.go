package run

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The retirement's steps are taken only with proof: three whole reads
// spread over min_age, the deployment not locked by a task; the first step
// stops, the second deletes only a stop that succeeded, once due, with the
// platform's proof covering the whole retirement; oldest proof first; none
// in report mode, none when too many look orphaned.
func TestRetirementStepsNeedProofAndTheirTime(t *testing.T) {
	start := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	cfg := config.RemediationConfig{OrphanDeployments: config.OrphanDeploymentsDelete, MinAge: day, MaxPerRun: 5,
		OrphanDeploymentsMaxShare: 0.5, RetirementPeriod: 7 * day}
	// proof of reads absent since `since` ago, the last `last` ago.
	proof := func(reads int, since, last time.Duration) platform.Entry {
		return platform.Entry{Since: start.Add(-since).Unix(), Reads: reads, Last: start.Add(-last).Unix()}
	}
	stopped := func(stoppedAgo, dueIn time.Duration) *vault.Record {
		return &vault.Record{PlanID: "p", Retiring: &vault.Retirement{StoppedAt: start.Add(-stoppedAgo).Format(time.RFC3339),
			DeleteAfter: start.Add(dueIn).Format(time.RFC3339)},
			LastOperation: &vault.Operation{Type: actionStop, State: vault.OperationSucceeded}}
	}
	type orphan struct {
		rec    *vault.Record
		entry  *platform.Entry
		locked bool
	}
	proven := proof(3, 2*day, 0)
	for _, tc := range []struct {
		name    string
		mode    string
		orphans map[string]orphan
		want    []string // "id:action", in order
		refused string
	}{
		{name: "proven: its VMs stopped", orphans: map[string]orphan{"a": {entry: &proven}}, want: []string{"a:stop"}},
		{name: "two reads are no proof", orphans: map[string]orphan{"a": {entry: ptr(proof(2, 2*day, 0))}}},
		{name: "reads within min_age are no proof", orphans: map[string]orphan{"a": {entry: ptr(proof(5, 2*day, 2*day-time.Hour))}}},
		{name: "no proof kept", orphans: map[string]orphan{"a": {}}},
		{name: "a task holds it", orphans: map[string]orphan{"a": {entry: &proven, locked: true}}},
		{name: "report mode takes no step", mode: config.OrphanDeploymentsReport, orphans: map[string]orphan{"a": {entry: &proven}}},
		{name: "stopped and due, absent since before the stop: deleted",
			orphans: map[string]orphan{"a": {rec: stopped(8*day, -day), entry: ptr(proof(9, 9*day, 0))}}, want: []string{"a:delete"}},
		{name: "stopped, not due yet", orphans: map[string]orphan{"a": {rec: stopped(2*day, 5*day), entry: ptr(proof(4, 3*day, 0))}}},
		{name: "stopped and due, but the proof started again after the stop",
			orphans: map[string]orphan{"a": {rec: stopped(8*day, -day), entry: ptr(proof(3, 2*day, 0))}}},
		{name: "a stop that did not succeed is no first step done",
			orphans: map[string]orphan{"a": {rec: &vault.Record{PlanID: "p", Retiring: &vault.Retirement{},
				LastOperation: &vault.Operation{Type: actionStop, State: "failed"}}, entry: &proven}}, want: []string{"a:stop"}},
		{name: "oldest proof first, then by id",
			orphans: map[string]orphan{"c": {entry: ptr(proof(3, 3*day, 0))}, "b": {entry: &proven}, "a": {entry: &proven}},
			want:    []string{"c:stop", "a:stop", "b:stop"}},
		{name: "more than max_per_run look orphaned: refused",
			orphans: map[string]orphan{"a": {entry: &proven}, "b": {entry: &proven}, "c": {entry: &proven}, "d": {entry: &proven},
				"e": {entry: &proven}, "f": {entry: &proven}},
			want: []string{"a:stop", "b:stop", "c:stop", "d:stop", "e:stop", "f:stop"}, refused: "6 of the 12 instances"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			if tc.mode != "" {
				c.OrphanDeployments = tc.mode
			}
			records := map[string]*vault.Record{}
			for i := range 12 - len(tc.orphans) {
				records[fmt.Sprintf("z%d", i)] = &vault.Record{PlanID: "p"}
			}
			j := platform.Judged{}
			doc := platform.Doc{Absent: map[string]platform.Entry{}}
			var deps []bosh.Deployment
			for id, o := range tc.orphans {
				records[id] = o.rec
				if o.rec == nil {
					records[id] = &vault.Record{PlanID: "p"}
				}
				j.OrphanDeployments = append(j.OrphanDeployments, id)
				if o.entry != nil {
					doc.Absent[id] = *o.entry
				}
				deps = append(deps, bosh.Deployment{Name: "p-" + id, Locked: o.locked})
			}
			seen := newListing(&vault.Index{Records: records}).with(deps)
			ready, refused := retirement{cfg: c}.steps(retireIn{judged: &j, doc: doc, seen: seen, start: start}, start)
			var got []string
			for _, s := range ready {
				got = append(got, s.id+":"+s.action)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("steps %v, want %v", got, tc.want)
			}
			if (tc.refused == "") != (refused == "") || !strings.Contains(refused, tc.refused) {
				t.Fatalf("refused %q, want %q", refused, tc.refused)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }
