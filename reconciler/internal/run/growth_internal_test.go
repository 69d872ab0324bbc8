package run

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// seenOf is the listing of an index of n records (instances i0, i1...,
// deployments p-i0...) and the deployments listed.
func seenOf(n int, deps []bosh.Deployment) listing {
	records := make(map[string]*vault.Record, n)
	for i := range n {
		records[fmt.Sprintf("i%d", i)] = &vault.Record{PlanID: "p"}
	}
	return newListing(&vault.Index{Records: records}).with(deps)
}

// named are n deployments named p-i{from}, p-i{from+1}...: those of
// the index's records while from+n is within it.
func named(from, n int) []bosh.Deployment {
	out := make([]bosh.Deployment, n)
	for i := range n {
		out[i] = bosh.Deployment{Name: fmt.Sprintf("p-i%d", from+i)}
	}
	return out
}

// The index growth plans for the records the index holds and one per
// chosen deployment it has none for, from the shards it has (a new index:
// the default), and wants more shards only past vault.ReshardAbove a shard.
func TestGrowthPlansForTheRecordsTheRunMayWrite(t *testing.T) {
	for _, c := range []struct {
		name                 string
		records, from, fresh int // the index's records; chosen: known from..., then fresh new ones
		known                int
		shards               int
		want                 [3]int // records, cur, want
	}{
		{name: "a new index, a few deployments", fresh: 10, want: [3]int{10, 128, 128}},
		{name: "a new index, a cold fleet past its shards", fresh: 40000, want: [3]int{40000, 128, 1024}},
		{name: "known deployments are not counted twice", records: 32768, known: 32768, shards: 128, want: [3]int{32768, 128, 128}},
		{name: "one new record past the limit", records: 32768, known: 32768, fresh: 1, shards: 128, want: [3]int{32769, 128, 1024}},
		{name: "a grown index stays", records: 50000, known: 50000, shards: 1024, want: [3]int{50000, 1024, 1024}},
	} {
		t.Run(c.name, func(t *testing.T) {
			chosen := append(named(0, c.known), named(c.records, c.fresh)...)
			in := growthIn{seen: seenOf(c.records, chosen), chosen: chosen, shards: c.shards}
			records, cur, want := in.plan()
			if got := [3]int{records, cur, want}; got != c.want {
				t.Fatalf("plan: records, cur, want %v, want %v", got, c.want)
			}
		})
	}
}

// An index that need not grow, or a run stopping, is not re-sharded: the
// phase answers no section and the shards as they were (its resharder,
// nil here, would panic if asked).
func TestGrowthLeavesAnIndexThatNeedNotGrow(t *testing.T) {
	g := growth{log: slog.New(slog.DiscardHandler)}
	in := growthIn{seen: seenOf(100, nil), chosen: named(100, 5), shards: 128}
	if ir, shards := g.Run(context.Background(), in); ir != nil || shards != 128 {
		t.Fatalf("small index: %+v, %d shards", ir, shards)
	}
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	in = growthIn{seen: seenOf(0, nil), chosen: named(0, 40000), shards: 0}
	if ir, shards := g.Run(stopped, in); ir != nil || shards != 0 {
		t.Fatalf("stopped run: %+v, %d shards", ir, shards)
	}
}
