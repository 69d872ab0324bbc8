package run

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// slot bounds how many workers use a system at once.
type slot chan struct{}

// hold takes a place and returns the function that gives it back. Giving
// it back yields the processor, so that a worker waiting for the place
// starts (its requests go out) before this one goes on with what it did
// there: else the waiting worker, made runnable on this processor, waits
// until this one blocks, matching and encoding meanwhile, and the place
// sits idle (~5% of a cold run's Director time at 100,000 deployments).
func (s slot) hold() func() {
	s <- struct{}{}
	return func() {
		<-s
		runtime.Gosched()
	}
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
		quar: r.quar, rounds: rounds, reader: records.NewReader(r.vault.Documents, r.vault.Backups, r.seen.index, r.log),
		writer: r.writer, ledger: r.ledger, policy: r.policy, index: r.seen.index, byDep: r.seen.byDep, conflict: r.conflict,
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
	for _, l := range lost {
		why := taken
		if l.Kept {
			why = kept
		}
		r.conflict(l.Conflict, why)
		r.progress.Done()
	}
	resumed := make([]job, len(won))
	for i, h := range won {
		resumed[i] = job{d: h.Value.d, held: h.Value}
	}
	each(ctx, min(n, len(resumed)), resumed, one)
}

// conflict records a deployment that claimed an instance it does not get
// as the run's conflict (nothing is written for it), for the reason why
// says, and in the instance's history (a webhook's conflict event) when it
// appears.
func (r *run) conflict(c report.Conflict, why reason) {
	r.ledger.Conflict(c, why(c))
	if r.known[memory.ConflictKey(c)] {
		return
	}
	loser := c.Loser
	details := map[string]string{"winner": c.Winner, "loser": c.Loser}
	if c.LoserDirector != "" {
		loser += " on Director " + c.LoserDirector
		details["loser_director"] = c.LoserDirector
	}
	r.hist.Add(c.InstanceID, vault.Event{Kind: "conflict", Deployment: c.Loser,
		Message: fmt.Sprintf("deployment %s claims this instance too; deployment %s keeps it and nothing is written for %s",
			loser, c.Winner, loser), Details: details})
}

// reason says why a deployment lost an instance, as the unmatched list
// says it.
type reason func(report.Conflict) string

// The reasons a deployment loses an instance.
var (
	taken reason = func(c report.Conflict) string {
		return fmt.Sprintf("instance %s is already matched by deployment %s", c.InstanceID, c.Winner)
	}
	kept reason = func(c report.Conflict) string {
		return fmt.Sprintf("instance %s is kept for deployment %s, which its index record names (skipped this run)", c.InstanceID, c.Winner)
	}
	owned reason = func(c report.Conflict) string {
		return fmt.Sprintf("instance %s belongs to deployment %s, which its record names: the record is the broker's (or an "+
			"adoption an operator confirmed), and no other deployment, on any Director, takes it", c.InstanceID, c.Winner)
	}
)

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
