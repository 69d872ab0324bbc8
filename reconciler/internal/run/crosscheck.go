package run

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// platformRead is the platform's read, started with the run, beside the
// Directors' listing.
type platformRead struct {
	done     chan struct{}
	view     *platform.View
	fresh    bool
	requests int
	took     time.Duration
	err      error
}

// readPlatform starts reading the platform through tracker, with the run's
// retries (policy) for what may pass (platform.Transient); force reads it
// again whatever the last read's age.
func readPlatform(ctx context.Context, tracker *platform.Tracker, policy memory.Policy, now func() time.Time, force bool) *platformRead {
	pr := &platformRead{done: make(chan struct{})}
	go func() {
		defer close(pr.done)
		start := now()
		pr.err = policy.Do(ctx, "platform", "cloud controller", func(ctx context.Context) error {
			var requests int
			var err error
			pr.view, pr.fresh, requests, _, err = tracker.Read(ctx, now, force)
			pr.requests += requests
			if err != nil && !platform.Transient(err) {
				return retry.Terminal(err)
			}
			return err
		})
		pr.took = now().Sub(start)
	}()
	return pr
}

// crossCheck is the platform cross-check phase: it holds the instances
// against the platform's view, each one's state in the summary; for a view
// read whole by this run (not in a dry run), the proof of each orphan
// deployment carried on in the platform document and the webhooks told of
// the new ones; then the retirement carried on (retirement). A platform
// that could not be read whole is "unknown": nothing is judged from it.
type crossCheck struct {
	tracker *platform.Tracker // its last view, for a read that failed
	grace   time.Duration     // reconciler.orphan_grace_period
	state   memory.StateStore // keeps the platform document (the proof)
	backups interface {
		LatestBackupRecord(ctx context.Context, id string) (*vault.Record, string, error)
	}
	retire retirement
	tell   teller
	log    *slog.Logger
}

// teller tells the instances' history and the webhooks of what a phase
// found or did.
type teller struct {
	record   func(id string, e vault.Event)
	notify   func(notify.Event)
	director func(id, deployment string) string // names an instance's Director in notifications
	now      func() time.Time
	runID    string
}

// event tells the history of instance id kind, and the webhooks typ, with
// msg.
func (t teller) event(id, deployment, kind, typ, msg string, details map[string]string) {
	t.record(id, vault.Event{Kind: kind, Deployment: deployment, Message: msg, Details: details})
	t.notify(notify.Event{Type: typ, InstanceID: id, Deployment: deployment, Director: t.director(id, deployment), Reason: msg,
		RunID: t.runID, Time: t.now().UTC()})
}

// crossIn is what the cross-check is given: the platform's read (nil: not
// read), the listing, which instances the run claimed, which records'
// Directors are out of the run, the run's start and whether it is dry.
type crossIn struct {
	read     *platformRead
	seen     listing
	claimed  func(id string) bool
	outOfRun func(rec *vault.Record) bool
	start    time.Time
	dryRun   bool
}

// Run answers the phase's section of the summary (nil: the platform was not
// read, or the run stopped first) and the errors of the run.
func (c crossCheck) Run(ctx context.Context, in crossIn) (*report.PlatformReport, []runError) {
	pr := in.read
	if pr == nil {
		return nil, nil
	}
	select {
	case <-pr.done:
	case <-ctx.Done():
		return nil, nil
	}
	if pr.err != nil {
		rep := platform.Unknown(pr.err.Error(), pr.requests, pr.took, c.tracker.Last())
		c.log.Warn("the platform could not be read: no instance is judged against it this run", "error", pr.err)
		return &rep, nil
	}
	j := platform.Classify(pr.view, platform.Input{Index: in.seen.index, Listed: func(name string) bool { return in.seen.listed[name] },
		OutOfRun: in.outOfRun, Claimed: in.claimed, Start: in.start, Grace: c.grace})
	j.Report.Fresh = pr.fresh
	if !pr.fresh {
		j.Report.Requests, j.Report.Seconds = 0, 0
	}
	var doc platform.Doc
	_, docErr := c.state.ReadState(ctx, platform.DocName, &doc)
	kept := docErr == nil
	if !kept {
		c.log.Warn("the orphan deployments' proof could not be read: none is carried on or deleted this run", "error", docErr)
	} else if pr.fresh {
		doc, kept = c.carryProof(ctx, in, doc, j, pr.view.ReadAt)
	}
	platform.Fill(&j.Report, doc, func(id string) bool {
		rec, _, err := c.backups.LatestBackupRecord(ctx, id)
		return err == nil && rec != nil
	})
	var errs []runError
	if kept && pr.fresh {
		errs = c.retire.Run(ctx, retireIn{judged: &j, doc: doc, seen: in.seen, start: in.start, dryRun: in.dryRun})
	}
	c.log.Info("platform cross-check", "fresh", pr.fresh, "instances", j.Report.Instances, "in_step", j.Report.Counts[report.InStep],
		"orphan_deployments", j.Report.Counts[report.OrphanDeployment], "platform_only", j.Report.Counts[report.PlatformOnly],
		"requests", j.Report.Requests, "seconds", j.Report.Seconds)
	return &j.Report, errs
}

// carryProof carries the orphan deployments' proof on to this read and
// keeps it (not in a dry run, whose proof is only shown), and tells the
// webhooks and the instances' history of the new orphan deployments. kept
// is false when the proof could not be written (the run deletes nothing).
func (c crossCheck) carryProof(ctx context.Context, in crossIn, doc platform.Doc, j platform.Judged, readAt time.Time) (_ platform.Doc, kept bool) {
	next, fresh := platform.Next(doc, j.OrphanDeployments, j.Unchecked, readAt, platform.Spacing(c.retire.cfg.MinAge))
	if in.dryRun {
		return next, true
	}
	if !next.Equal(doc) {
		if err := c.state.WriteState(ctx, platform.DocName, next); err != nil {
			c.log.Warn("the orphan deployments' proof could not be written: none is deleted this run", "error", err)
			return doc, false
		}
	}
	for _, id := range fresh {
		name := in.seen.index[id].Deployment(id)
		reason := fmt.Sprintf("the platform has no instance %s; its deployment %s runs and Vault holds its records", id, name)
		c.log.Warn("orphan deployment: the platform does not have the instance", "instance", id, "deployment", name)
		c.tell.event(id, name, "orphan_deployment", notify.OrphanDeployment, reason, nil)
	}
	return next, true
}

// runError is an error a phase answers for the run's errors: key names its
// item ("": the run's own).
type runError struct {
	key string
	err error
}
