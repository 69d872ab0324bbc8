package run

import (
	"context"
	"fmt"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// slot bounds how many workers use a system at once.
type slot chan struct{}

// hold takes a place and returns the function that gives it back.
func (s slot) hold() func() {
	s <- struct{}{}
	return func() { <-s }
}

// slots are the run's places at the Director and at Vault: each
// Config.MaxConcurrency, so that a worker writing to Vault never keeps
// another from fetching.
type slots struct{ director, vault slot }

// reconcileAll reconciles the deployments with twice Config.MaxConcurrency
// workers (at most Config.MaxConcurrency of them asking the Directors and
// as many writing to Vault): the deployments whose fetch failed go again in
// later rounds (memory.Rounds), and once every deployment is observed the
// claims are settled: the held claimants that won go through reconcile
// again, the others are the run's conflicts.
func (r *run) reconcileAll(ctx context.Context, deps []bosh.Deployment, claims *match.Claims[*held]) {
	n := r.p.Config.MaxConcurrency
	rounds := memory.NewRounds(r.policy)
	w := &deployments{fleet: r.fleet, cache: r.p.Cache, view: r.view, trust: r.trust, matcher: r.p.Matcher, claims: claims,
		quar: r.quar, rounds: rounds, reader: records.NewReader(r.vault.Documents, r.vault.Backups, r.index, r.log),
		writer: r.writer, ledger: r.ledger, policy: r.policy, index: r.index, byDep: r.byDep,
		slots: slots{director: make(slot, n), vault: make(slot, n)}, least: r.p.Config.MinConfidence,
		force: r.opts.Force, dryRun: r.opts.DryRun, start: r.start, log: r.log}
	one := func(j job) {
		r.ledger.Safely(report.DeploymentKey(j.d.Name), func() {
			if w.reconcile(ctx, j) {
				r.progress.Done()
			}
		})
	}
	batch := make([]job, len(deps))
	for i, d := range deps {
		batch[i] = job{d: d}
	}
	for round := 1; len(batch) > 0 && each(ctx, 2*n, batch, one); round++ {
		again := rounds.Next()
		if len(again) == 0 {
			break
		}
		wait := r.policy.Round(round)
		r.log.Warn("deployments could not be fetched, trying them again in a later round",
			"deployments", len(again), "round", round+1, "retry_in", wait)
		if retry.Sleep(ctx, wait) != nil {
			break
		}
		batch = batch[:0]
		for _, d := range again {
			batch = append(batch, job{d: d})
		}
	}
	won, lost := claims.Settle()
	r.recordLost(lost)
	resumed := make([]job, len(won))
	for i, h := range won {
		resumed[i] = job{d: h.Value.d, held: h.Value}
	}
	each(ctx, min(n, len(resumed)), resumed, one)
}

// recordLost records the held claimants that lost their instance as the
// run's conflicts (nothing is written for them), each in the instance's
// history when it appears.
func (r *run) recordLost(lost []match.Lost) {
	for _, l := range lost {
		r.ledger.Conflict(l.Conflict, l.Kept)
		r.progress.Done()
		if !r.known[memory.ConflictKey(l.Conflict)] {
			r.hist.Add(l.InstanceID, vault.Event{Kind: "conflict", Deployment: l.Loser,
				Message: fmt.Sprintf("deployment %s claims this instance too; deployment %s keeps it and nothing is written for %s",
					l.Loser, l.Winner, l.Loser), Details: map[string]string{"winner": l.Winner, "loser": l.Loser}})
		}
	}
}

// each hands the jobs to workers goroutines and waits until they are all
// done; false when ctx ended before every job was handed out.
func each(ctx context.Context, workers int, jobs []job, do func(job)) bool {
	work := make(chan job)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range work {
				do(j)
			}
		})
	}
	defer wg.Wait()
	defer close(work)
	for _, j := range jobs {
		select {
		case work <- j:
		case <-ctx.Done():
			return false
		}
	}
	return true
}
