package run

import (
	"fmt"
	"log/slog"
	"maps"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// quarantining is the quarantine phase: it quarantines what failed in this
// (complete) run and releases what is in step again (memory.Quarantine's
// Settle), and tells the instances' history and the log of each. A run
// stopped part-way does not come here: its failures may be the outage's.
// An item that may live on a Director the run could not list (or lost
// part-way) is neither quarantined nor released: its failures may be that
// Director's. The quarantine is written back by the phase's entry, when the
// answer says so.
type quarantining struct {
	quar   *memory.Quarantine // the run's, as read at its start
	record func(id string, e vault.Event)
	now    func() time.Time // when the failures are recorded (backoffs count from it)
	log    *slog.Logger
}

// quarantineIn is what the quarantine phase is given: the listing, who owns
// each deployment (the run's scope with them), the ledger's failures (each
// key's first error) and those on the Directors' transient faults, the
// fleet's MayHold, whether the quarantine could be read and whether the run
// is dry.
type quarantineIn struct {
	seen      listing
	owners    owners
	failed    map[string]string
	transient map[string]bool
	mayHold   func(deployment string, rec *vault.Record, isInstance bool) bool
	loaded    bool
	dryRun    bool
}

// mayBeOut says whether the item of key ("deployment NAME" or "instance
// ID") may belong to a Director this run could not list: it was not looked
// at.
func (in quarantineIn) mayBeOut(key string) bool {
	kind, name := splitKey(key)
	if kind == "instance" {
		return in.mayHold("", in.seen.index[name], true)
	}
	return in.mayHold(name, nil, false)
}

// considered says whether the run looked at the item of key: within its
// scope, not out of the run.
func (in quarantineIn) considered(key string) bool { return in.owners.covers(key) && !in.mayBeOut(key) }

// charged is the failures the quarantine takes (none of an item out of the
// run) and those it excuses: every transient one when they are a storm of
// the Directors' faults (memory.Storm), theirs rather than the
// deployments' (a healthy deployment that met one must not wait the
// quarantine's backoff); nil otherwise.
func (in quarantineIn) charged() (failed map[string]string, excused map[string]bool) {
	failed = maps.Clone(in.failed)
	maps.DeleteFunc(failed, func(key, _ string) bool { return in.mayBeOut(key) })
	if memory.Storm(len(in.transient), len(in.seen.listed)) {
		excused = in.transient
	}
	return failed, excused
}

// quarantineOut is the quarantine phase's answer: its section of the
// summary and whether the quarantine is to be written back (it changed, the
// run is not dry).
type quarantineOut struct {
	skipped, added, released []report.Quarantined
	total, excused           int
	save                     bool
}

// count puts the phase's section in the summary.
func (o *quarantineOut) count(s *report.Summary) {
	s.Quarantined, s.NewlyQuarantined, s.Released = o.skipped, o.added, o.released
	s.QuarantinedTotal, s.Excused = o.total, o.excused
}

// Run settles the quarantine and answers the phase's section; nil when the
// quarantine could not be read (nothing is quarantined, released or
// written).
func (q quarantining) Run(in quarantineIn) *quarantineOut {
	if !in.loaded {
		return nil
	}
	failed, excused := in.charged()
	if excused != nil {
		q.log.Warn("the Directors were failing: transient faults hit many deployments; they are not quarantined and the next run tries them again",
			"failed", len(excused), "listed", len(in.seen.listed))
	}
	ch := q.quar.Settle(q.now(), failed, excused, in.seen.listed, in.owners.instanceOf, in.considered)
	q.tell(ch)
	return &quarantineOut{skipped: q.quar.Skipped(), added: ch.Added, released: ch.Released, total: len(q.quar.List()),
		excused: len(excused), save: !ch.Empty() && !in.dryRun}
}

// tell tells the history and the log of what entered and left the
// quarantine.
func (q quarantining) tell(ch memory.Change) {
	for _, it := range ch.Added {
		transition := "yes" // notified when it enters the quarantine, not at each failed retry
		if it.Failures > 1 {
			transition = "no"
		}
		q.record(it.InstanceID, vault.Event{Kind: "quarantined", Deployment: it.Deployment,
			Message: fmt.Sprintf("failed in %d runs in a row; skipped until %s: %s", it.Failures,
				it.NextAttempt.UTC().Format(time.RFC3339), it.LastError), Details: map[string]string{"transition": transition}})
		q.log.Warn("quarantined: later runs skip it until its backoff expires", "deployment", it.Deployment,
			"instance", it.InstanceID, "failures", it.Failures, "next_attempt", it.NextAttempt, "error", it.LastError)
	}
	for _, it := range ch.Released {
		q.record(it.InstanceID, vault.Event{Kind: "released", Deployment: it.Deployment,
			Message: "left the quarantine: in step again, or its deployment is gone"})
		q.log.Info("released from quarantine", "deployment", it.Deployment, "instance", it.InstanceID)
	}
}
