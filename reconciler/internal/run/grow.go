package run

import (
	"context"
	"errors"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// growIndex re-shards the index when its records outgrew its shards
// (vault.ShardsFor), so that a record's write keeps costing what it did:
// each index write rewrites one shard. It runs after the run's writes, is
// skipped by a dry or scoped run, and an interrupted or failed re-shard is
// taken up by the next run (the index stays whole meanwhile: readers and
// writers follow what moved).
func growIndex(ctx context.Context, r *run) {
	if r.opts.DryRun || !r.opts.Scope.Empty() || r.shards == 0 || ctx.Err() != nil {
		return
	}
	want := vault.ShardsFor(r.shards, len(r.index))
	if want == r.shards {
		return
	}
	start := time.Now()
	rep, err := r.vault.Index.Reshard(ctx, want)
	ir := report.IndexReport{FromShards: r.shards, ToShards: rep.To, Records: len(r.index), Writes: rep.Writes,
		DurationSeconds: time.Since(start).Seconds()}
	if err != nil {
		ir.Error = err.Error()
		if !errors.Is(err, context.Canceled) {
			r.log.Warn("re-sharding the index did not finish; the next run goes on", "from", r.shards, "to", want, "error", err)
		}
	} else {
		r.log.Info("index re-sharded", "from", r.shards, "to", rep.To, "records", len(r.index), "writes", rep.Writes,
			"duration", time.Since(start).Round(time.Millisecond))
	}
	r.ledger.Count(func(s *report.Summary) { s.Index = &ir })
}
