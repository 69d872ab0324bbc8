package main

import (
	"context"
	"sync"
)

// recreateRoll is recreate-all's order, as a fleet upgrade's: the canaries
// first (none other starts once one failed), then the others, at most
// maxInFlight at once, none started once maxFailures failed (0: no limit).
type recreateRoll struct {
	canaries, maxInFlight, maxFailures int
	one                                func(context.Context, recreateTarget, *recreateResult)
	progress                           func(recreateResult)
}

// run recreates targets and returns a result for each, in their order, and
// why it stopped early ("" when it did not).
func (rr recreateRoll) run(ctx context.Context, targets []recreateTarget, results []recreateResult) string {
	n := min(rr.canaries, len(targets))
	for i := range n {
		results[i].Canary = true
	}
	if stopped := rr.batch(ctx, targets[:n], results[:n], min(max(n, 1), rr.maxInFlight), 1); stopped != "" {
		rr.notStarted(results[n:], "a canary failed")
		if ctx.Err() != nil {
			return "stopped: " + ctx.Err().Error()
		}
		return "a canary failed: no other instance was recreated"
	}
	if stopped := rr.batch(ctx, targets[n:], results[n:], rr.maxInFlight, rr.maxFailures); stopped != "" {
		return stopped
	}
	return ""
}

// batch runs targets at most inFlight at once; it starts none once limit
// of them failed (0: no limit) or ctx ended, and says why it stopped.
func (rr recreateRoll) batch(ctx context.Context, targets []recreateTarget, results []recreateResult, inFlight, limit int) string {
	var mu sync.Mutex
	var wg sync.WaitGroup
	failures, stopped := 0, ""
	slots := make(chan struct{}, max(inFlight, 1))
	for i, t := range targets {
		slots <- struct{}{}
		mu.Lock()
		switch {
		case ctx.Err() != nil && stopped == "":
			stopped = "stopped: " + ctx.Err().Error()
		case limit > 0 && failures >= limit && stopped == "":
			stopped = "too many failures: no other instance was recreated"
		}
		if stopped != "" {
			mu.Unlock()
			<-slots
			rr.notStarted(results[i:i+1], stopped)
			continue
		}
		mu.Unlock()
		wg.Go(func() {
			defer func() { <-slots }()
			rr.one(ctx, t, &results[i])
			mu.Lock()
			if results[i].State == recreateFailed {
				failures++
			}
			mu.Unlock()
			if rr.progress != nil {
				rr.progress(results[i])
			}
		})
	}
	wg.Wait()
	if stopped == "" && limit > 0 && failures >= limit {
		stopped = "too many failures"
	}
	return stopped
}

func (rr recreateRoll) notStarted(results []recreateResult, why string) {
	for i := range results {
		results[i].State, results[i].Reason = notStarted, why
	}
}
