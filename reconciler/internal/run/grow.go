package run

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// growIndex re-shards the index, before the run writes, when the records
// it may hold once the run is done (those it holds, and one for each chosen
// deployment it has none for) would outgrow its shards (vault.ShardsFor),
// so that a record's write keeps costing what it did: each index write
// rewrites one shard. Growing first moves what the index holds now, little
// when it is new or small, and every later write of the run goes to a
// small shard (a cold run over 100,000 deployments would otherwise rewrite
// shards of ~780 records thousands of times). A dry or scoped run skips
// it; an interrupted or failed re-shard is taken up by the next run (the
// index stays whole meanwhile: readers and writers follow what moved).
func growIndex(ctx context.Context, r *run, chosen []bosh.Deployment) {
	if r.opts.DryRun || !r.opts.Scope.Empty() || ctx.Err() != nil {
		return
	}
	records := len(r.index)
	for _, d := range chosen {
		if _, ok := r.byDep[d.Name]; !ok {
			records++
		}
	}
	cur := r.shards
	if cur == 0 { // a new index: its first write creates it with the default count
		cur = vault.DefaultShards
	}
	want := vault.ShardsFor(cur, records)
	if want == cur {
		return
	}
	start := time.Now()
	rep, err := r.vault.Index.Reshard(ctx, want)
	ir := report.IndexReport{FromShards: cmp.Or(rep.From, cur), ToShards: cmp.Or(rep.To, want), Records: len(r.index),
		Expected: records, Writes: rep.Writes, DurationSeconds: time.Since(start).Seconds()}
	if err != nil {
		ir.Error = err.Error()
		if !errors.Is(err, context.Canceled) {
			r.log.Warn("re-sharding the index did not finish; the run writes to the shards as they are, the next run goes on",
				"from", cur, "to", want, "error", err)
		}
	} else {
		r.shards = rep.To
		r.log.Info("index re-sharded", "from", rep.From, "to", rep.To, "records", len(r.index), "expected", records,
			"writes", rep.Writes, "duration", time.Since(start).Round(time.Millisecond))
	}
	r.ledger.Count(func(s *report.Summary) { s.Index = &ir })
}
