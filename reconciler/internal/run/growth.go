package run

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// growth is the index growth phase: it re-shards the index, before the run
// writes, when the records it may hold once the run is done (those it
// holds, and one for each chosen deployment it has none for) would outgrow
// its shards (vault.ShardsFor), so that a record's write keeps costing what
// it did: each index write rewrites one shard. Growing first moves what the
// index holds now, little when it is new or small, and every later write of
// the run goes to a small shard (a cold run over 100,000 deployments would
// otherwise rewrite shards of ~780 records thousands of times). An
// interrupted or failed re-shard is taken up by the next run (the index
// stays whole meanwhile: readers and writers follow what moved).
type growth struct {
	index resharder
	log   *slog.Logger
}

// resharder re-shards the index (the guard's index store).
type resharder interface {
	Reshard(ctx context.Context, to int) (vault.ReshardReport, error)
}

// growthIn is what the index growth is given: the listing, the
// deployments the run deals with, and the index's shard count as read.
type growthIn struct {
	seen   listing
	chosen []bosh.Deployment
	shards int
}

// plan is the records the index may hold once the run is done, the shard
// count it has (a new index: the count its first write creates) and the
// count it wants for them.
func (in growthIn) plan() (records, cur, want int) {
	records = len(in.seen.index)
	for _, d := range in.chosen {
		if _, ok := in.seen.byDep[d.Name]; !ok {
			records++
		}
	}
	cur = in.shards
	if cur == 0 {
		cur = vault.DefaultShards
	}
	return records, cur, vault.ShardsFor(cur, records)
}

// Run re-shards the index when its plan says so. It answers its section of
// the summary (nil: nothing to grow) and the shard count the run writes to.
func (g growth) Run(ctx context.Context, in growthIn) (*report.IndexReport, int) {
	records, cur, want := in.plan()
	if want == cur || ctx.Err() != nil {
		return nil, in.shards
	}
	start := time.Now()
	rep, err := g.index.Reshard(ctx, want)
	ir := report.IndexReport{FromShards: cmp.Or(rep.From, cur), ToShards: cmp.Or(rep.To, want), Records: len(in.seen.index),
		Expected: records, Writes: rep.Writes, DurationSeconds: time.Since(start).Seconds()}
	if err != nil {
		ir.Error = err.Error()
		if !errors.Is(err, context.Canceled) {
			g.log.Warn("re-sharding the index did not finish; the run writes to the shards as they are, the next run goes on",
				"from", cur, "to", want, "error", err)
		}
		return &ir, in.shards
	}
	g.log.Info("index re-sharded", "from", rep.From, "to", rep.To, "records", len(in.seen.index), "expected", records,
		"writes", rep.Writes, "duration", time.Since(start).Round(time.Millisecond))
	return &ir, rep.To
}
