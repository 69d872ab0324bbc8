package upgrade

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// Attempt upgrades one candidate; canary says it is one of the canaries.
// It prepares the upgrade (reads, renders, backs up) on its own, then
// takes its slot for the deploy, which it holds until it returns (its task
// and a rollback's ended). It answers a Result whose State is busy when the
// instance's operation was in progress (it is tried again later), or
// Pending when no slot could be taken any more (the fleet stopped).
type Attempt func(ctx context.Context, c Candidate, canary bool, slot Slot) report.UpgradeResult

// Slot is a deploy's place among the max_in_flight.
type Slot interface {
	// Take waits for a place (or ctx): "" when taken (given back once the
	// attempt's end is taken in, so that a failure stops the deploys
	// waiting), else why none may be taken any more.
	Take(ctx context.Context) (why string)
	// Free gives the place back at once: the deploy ended well and what is
	// left to do is Vault's (a failed one keeps it for its rollback).
	Free()
}

// Roll applies the fleet rules to a list of candidates.
type Roll struct {
	// Rules are the fleet rules.
	Rules report.UpgradeRules
	// Attempt upgrades one candidate. Required.
	Attempt Attempt
	// Gate says why no upgrade may start now ("" when one may): outside
	// the window, no longer the leader. Nil: always.
	Gate func() string
	// Progress is told of each candidate whose state changed, by its
	// index in the list, from the Roll's own goroutine. Nil: nobody.
	Progress func(i int, r report.UpgradeResult)
}

// Run upgrades cands in their order under the fleet rules and returns
// their results in that order, with why it stopped starting upgrades
// before the end ("" when it went through the list). Upgrades under way
// always finish: Run returns once none is.
func (r Roll) Run(ctx context.Context, cands []Candidate) ([]report.UpgradeResult, string) {
	ro := newRolling(r, cands)
	for {
		ro.startWhatMay(ctx)
		if ro.inFlight == 0 {
			if ro.stopped != "" || (len(ro.queue) == 0 && len(ro.retries) == 0) {
				break
			}
			ro.waitRetry(ctx) // only busy instances are left, not due yet
			continue
		}
		ro.waitEnd()
	}
	for i, res := range ro.res {
		if res.State == report.UpgradePending && ro.stopped != "" {
			ro.res[i].Reason = ro.stopped
		}
	}
	return ro.res, ro.stopped
}

// rolling is the state of one Run.
type rolling struct {
	Roll
	cands    []Candidate
	res      []report.UpgradeResult
	queue    []int // candidates not tried yet, in order
	retries  []later
	done     chan ended
	inFlight int // attempts under way: preparing, or holding a slot
	canaries int // canaries upgraded
	failures int
	tried    int // candidates tried at least once
	stopped  string
	slots    slots
}

// slots are the max_in_flight places of the deploys: an attempt prepares
// on its own and takes one for its deploy, so that the next deploys need
// not wait for their preparation.
type slots struct {
	places chan struct{}
	mu     sync.Mutex
	halt   string // why no place may be taken any more
}

// ticket is one attempt's claim on a place.
type ticket struct {
	s     *slots
	taken bool
}

func (t *ticket) Take(ctx context.Context) string {
	s := t.s
	if why := s.halted(); why != "" {
		return why
	}
	select {
	case s.places <- struct{}{}:
	case <-ctx.Done():
		return "stopped: " + context.Cause(ctx).Error()
	}
	if why := s.halted(); why != "" {
		<-s.places
		return why
	}
	t.taken = true
	return ""
}

func (t *ticket) Free() {
	if t.taken {
		t.taken = false
		<-t.s.places
	}
}

func (s *slots) halted() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.halt
}

func (s *slots) stop(why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.halt = why
}

type later struct {
	i  int
	at time.Time
}

type ended struct {
	i int
	r report.UpgradeResult
	t *ticket
}

func newRolling(r Roll, cands []Candidate) *rolling {
	ro := &rolling{Roll: r, cands: cands, res: make([]report.UpgradeResult, len(cands)), done: make(chan ended)}
	for i, c := range cands {
		ro.res[i] = c.result(report.UpgradePending)
		ro.queue = append(ro.queue, i)
	}
	ro.Rules.MaxInFlight = max(ro.Rules.MaxInFlight, 1)
	ro.Rules.AttemptLimit = max(ro.Rules.AttemptLimit, 1)
	ro.slots.places = make(chan struct{}, ro.Rules.MaxInFlight)
	return ro
}

// canaryPhase says the canaries are not all upgraded yet.
func (ro *rolling) canaryPhase() bool { return ro.canaries < ro.Rules.Canaries }

// limit is how many attempts may be under way now: the canaries alone, then
// twice max_in_flight (as many preparing as deploying; the slots bound the
// deploys).
func (ro *rolling) limit() int {
	if ro.canaryPhase() {
		return min(ro.Rules.MaxInFlight, ro.Rules.Canaries-ro.canaries)
	}
	return 2 * ro.Rules.MaxInFlight
}

// startWhatMay starts upgrades while the rules let it.
func (ro *rolling) startWhatMay(ctx context.Context) {
	for ro.stopped == "" && ro.inFlight < ro.limit() {
		i, ok := ro.next()
		if !ok {
			return
		}
		if why := ro.gate(ctx); why != "" {
			ro.stop(why)
			ro.queue = append([]int{i}, ro.queue...) // not tried: stays pending
			return
		}
		first := ro.res[i].Attempts == 0
		if first && ro.Rules.MaxInstances > 0 && ro.tried >= ro.Rules.MaxInstances {
			ro.stopped = fmt.Sprintf("%d instances tried: the most one fleet upgrade tries", ro.Rules.MaxInstances)
			ro.queue = append([]int{i}, ro.queue...)
			return
		}
		if first {
			ro.tried++
		}
		ro.res[i].Attempts++
		ro.res[i].State, ro.res[i].Reason = report.UpgradeInFlight, ""
		canary := ro.canaryPhase()
		ro.res[i].Canary = canary
		ro.tell(i)
		ro.inFlight++
		go func() {
			t := &ticket{s: &ro.slots}
			ro.done <- ended{i, ro.Attempt(ctx, ro.cands[i], canary, t), t}
		}()
	}
}

// gate is why nothing may start now.
func (ro *rolling) gate(ctx context.Context) string {
	if err := ctx.Err(); err != nil {
		return "stopped: " + context.Cause(ctx).Error()
	}
	if ro.Gate != nil {
		return ro.Gate()
	}
	return ""
}

// next is the next candidate to try: the list in order, then the busy ones
// whose retry is due.
func (ro *rolling) next() (int, bool) {
	if len(ro.queue) > 0 {
		i := ro.queue[0]
		ro.queue = ro.queue[1:]
		return i, true
	}
	if len(ro.retries) > 0 && !time.Now().Before(ro.retries[0].at) {
		i := ro.retries[0].i
		ro.retries = ro.retries[1:]
		return i, true
	}
	return 0, false
}

// waitEnd waits for an upgrade under way to end, or for a busy
// instance's retry to come due while there is room for it.
func (ro *rolling) waitEnd() {
	var due <-chan time.Time
	if len(ro.retries) > 0 && ro.inFlight < ro.limit() {
		t := time.NewTimer(time.Until(ro.retries[0].at))
		defer t.Stop()
		due = t.C
	}
	select {
	case d := <-ro.done:
		ro.ended(d.i, d.r)
		if d.t.taken { // after ended: a failure it brought stops the deploys waiting for its place
			<-ro.slots.places
		}
	case <-due:
	}
}

// waitRetry waits for the first busy instance's retry, or ctx.
func (ro *rolling) waitRetry(ctx context.Context) {
	t := time.NewTimer(time.Until(ro.retries[0].at))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		ro.stop("stopped: " + context.Cause(ctx).Error())
	}
}

// ended takes candidate i's attempt in.
func (ro *rolling) ended(i int, r report.UpgradeResult) {
	ro.inFlight--
	prev := ro.res[i]
	r.Attempts, r.Canary = prev.Attempts, prev.Canary
	if r.State == report.UpgradePending { // prepared, but the fleet stopped before its deploy
		ro.res[i] = r
		ro.tell(i)
		return
	}
	if r.State == busy {
		if prev.Attempts < ro.Rules.AttemptLimit {
			prev.State, prev.Reason = report.UpgradePending, r.Reason+"; tried again later"
			ro.res[i] = prev
			ro.retries = append(ro.retries, later{i, time.Now().Add(ro.Rules.RetryDelay)})
			ro.tell(i)
			return
		}
		r.State, r.Reason = report.UpgradeSkipped, fmt.Sprintf("busy at each of %d attempts: %s", prev.Attempts, r.Reason)
	}
	ro.res[i] = r
	ro.tell(i)
	switch {
	case r.Canary && report.UpgradeFailure(r.State):
		ro.failures++
		ro.stop(fmt.Sprintf("canary %s %s: no other upgrade starts", r.InstanceID, r.State))
	case report.UpgradeFailure(r.State):
		ro.failures++
		if ro.Rules.MaxFailures > 0 && ro.failures >= ro.Rules.MaxFailures && ro.stopped == "" {
			ro.stop(fmt.Sprintf("%d upgrades failed (max_failures %d): no other upgrade starts", ro.failures, ro.Rules.MaxFailures))
		}
	case r.Canary && r.State == report.UpgradeUpgraded:
		ro.canaries++
	}
}

// stop starts no other attempt, nor lets a prepared one deploy, for why.
func (ro *rolling) stop(why string) {
	ro.stopped = why
	ro.slots.stop(why)
}

func (ro *rolling) tell(i int) {
	if ro.Progress != nil {
		ro.Progress(i, ro.res[i])
	}
}
