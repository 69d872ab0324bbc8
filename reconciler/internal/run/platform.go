package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/internal/retry"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/report"
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

// readPlatform starts reading the platform, when one is configured and the
// run is whole (a scoped run does not hold the fleet against it), with the
// run's retries for what may pass (platform.Transient).
func readPlatform(ctx context.Context, r *run) *platformRead {
	if r.p.Platform == nil || !r.opts.Scope.Empty() {
		return nil
	}
	pr := &platformRead{done: make(chan struct{})}
	go func() {
		defer close(pr.done)
		start := r.p.Now()
		pr.err = r.policy.Do(ctx, "platform", "cloud controller", func(ctx context.Context) error {
			var requests int
			var err error
			pr.view, pr.fresh, requests, _, err = r.p.Platform.Read(ctx, r.p.Now, r.opts.Force)
			pr.requests += requests
			if err != nil && !platform.Transient(err) {
				return retry.Terminal(err)
			}
			return err
		})
		pr.took = r.p.Now().Sub(start)
	}()
	return pr
}

// crossCheck holds the instances against the platform's view: each one's
// state in the summary; for a view read whole by this run (not in a dry
// run), the proof of each orphan deployment carried on in the platform
// document and the webhooks told of the new ones; then the orphan
// deployments the remediation allows deleted. A platform that could not be
// read whole is "unknown": nothing is judged from it.
func crossCheck(ctx context.Context, r *run, pr *platformRead, claims *match.Claims[*held]) {
	if pr == nil {
		return
	}
	select {
	case <-pr.done:
	case <-ctx.Done():
		return
	}
	if pr.err != nil {
		rep := platform.Unknown(pr.err.Error(), pr.requests, pr.took, r.p.Platform.Last())
		r.log.Warn("the platform could not be read: no instance is judged against it this run", "error", pr.err)
		r.ledger.Count(func(s *report.Summary) { s.Platform = &rep })
		return
	}
	j := platform.Classify(pr.view, platform.Input{Index: r.seen.index, Listed: func(name string) bool { return r.seen.listed[name] },
		OutOfRun: r.fleet.Unknown, Claimed: claims.IsClaimed, Start: r.start, Grace: r.p.Config.OrphanGracePeriod})
	j.Report.Fresh = pr.fresh
	if !pr.fresh {
		j.Report.Requests, j.Report.Seconds = 0, 0
	}
	var doc platform.Doc
	_, docErr := r.vault.Memory.ReadState(ctx, platform.DocName, &doc)
	kept := docErr == nil
	if !kept {
		r.log.Warn("the orphan deployments' proof could not be read: none is carried on or deleted this run", "error", docErr)
	} else if pr.fresh {
		doc, kept = carryProof(ctx, r, doc, j, pr.view.ReadAt)
	}
	platform.Fill(&j.Report, doc, func(id string) bool {
		rec, _, err := r.vault.Backups.LatestBackupRecord(ctx, id)
		return err == nil && rec != nil
	})
	if kept && pr.fresh {
		retire(ctx, r, &j, doc)
	}
	r.log.Info("platform cross-check", "fresh", pr.fresh, "instances", j.Report.Instances, "in_step", j.Report.Counts[report.InStep],
		"orphan_deployments", j.Report.Counts[report.OrphanDeployment], "platform_only", j.Report.Counts[report.PlatformOnly],
		"requests", j.Report.Requests, "seconds", j.Report.Seconds)
	r.ledger.Count(func(s *report.Summary) { s.Platform = &j.Report })
}

// carryProof carries the orphan deployments' proof on to this read and
// keeps it (not in a dry run, whose proof is only shown), and tells the
// webhooks and the instances' history of the new orphan deployments. kept
// is false when the proof could not be written (the run deletes nothing).
func carryProof(ctx context.Context, r *run, doc platform.Doc, j platform.Judged, readAt time.Time) (_ platform.Doc, kept bool) {
	next, fresh := platform.Next(doc, j.OrphanDeployments, j.Unchecked, readAt, platform.Spacing(r.p.Config.Remediation.MinAge))
	if r.opts.DryRun {
		return next, true
	}
	if !next.Equal(doc) {
		if err := r.vault.Memory.WriteState(ctx, platform.DocName, next); err != nil {
			r.log.Warn("the orphan deployments' proof could not be written: none is deleted this run", "error", err)
			return doc, false
		}
	}
	for _, id := range fresh {
		rec := r.seen.index[id]
		name := rec.Deployment(id)
		reason := fmt.Sprintf("the platform has no instance %s; its deployment %s runs and Vault holds its records", id, name)
		r.log.Warn("orphan deployment: the platform does not have the instance", "instance", id, "deployment", name)
		r.hist.Add(id, vault.Event{Kind: "orphan_deployment", Deployment: name, Message: reason})
		r.hist.Notify(notify.Event{Type: notify.OrphanDeployment, InstanceID: id, Deployment: name,
			Director: r.directorOf(id, name), Reason: reason, RunID: r.id, Time: r.p.Now().UTC()})
	}
	return next, true
}

// retire carries the orphan deployments' retirement on, in two steps (in a
// dry run, lists what it would do): a retiring instance the platform lists
// again is started (whatever the mode); with
// reconciler.remediation.orphan_deployments delete, an orphan deployment
// proven (platform.Entry.Proven: at least three whole reads spread over
// min_age) and not locked by a task has its VMs stopped (the first step),
// and one stopped for retirement_period without the platform listing it
// again is deleted (the second); at most max_per_run of those two a run,
// oldest proof first; none when so many look orphaned that the read is
// more likely wrong than the fleet.
func retire(ctx context.Context, r *run, j *platform.Judged, doc platform.Doc) {
	cfg := r.p.Config.Remediation
	if r.p.Ops != nil {
		unretire(ctx, r, j)
	}
	if cfg.OrphanDeployments != config.OrphanDeploymentsDelete || len(j.OrphanDeployments) == 0 {
		return
	}
	now := r.p.Now()
	var ready []step
	for _, id := range j.OrphanDeployments {
		e, ok := doc.Absent[id]
		rec := r.seen.index[id]
		if !ok || !e.Proven(r.start, cfg.MinAge) || r.seen.locked[rec.Deployment(id)] {
			continue
		}
		switch {
		case !retireStopped(rec):
			ready = append(ready, step{id: id, since: e.Since, action: actionStop})
		case rec.Retiring.Due(now) && absentThroughout(e, rec.Retiring, now, cfg.RetirementPeriod):
			ready = append(ready, step{id: id, since: e.Since, action: config.OrphanDeploymentsDelete})
		}
	}
	if len(ready) == 0 {
		return
	}
	if why := tooManyOrphans(len(j.OrphanDeployments), len(r.seen.index), cfg); why != "" {
		j.Report.Refused = why
		r.ledger.Fail("", errors.New("platform cross-check: "+j.Report.Refused))
		return
	}
	if r.p.Ops == nil {
		j.Report.Refused = "the reconciler runs without the broker: orphan deployments are only reported"
		return
	}
	slices.SortFunc(ready, func(a, b step) int { return cmp.Or(cmp.Compare(a.since, b.since), cmp.Compare(a.id, b.id)) })
	for _, c := range ready[:min(len(ready), cfg.MaxPerRun)] {
		if ctx.Err() != nil {
			break
		}
		e := doc.Absent[c.id]
		rem := report.Remediation{InstanceID: c.id, Deployment: r.seen.index[c.id].Deployment(c.id), Action: c.action}
		reason := fmt.Sprintf("the platform has had no instance %s in %d reads since %s (an orphan deployment)",
			c.id, e.Reads, time.Unix(e.Since, 0).UTC().Format(time.RFC3339))
		if !r.opts.DryRun {
			var err error
			if c.action == actionStop {
				rem.Backup, rem.TaskID, err = r.p.Ops.StopOrphanDeployment(ctx, c.id, reason, now.Add(cfg.RetirementPeriod))
			} else {
				rem.Backup, rem.TaskID, err = r.p.Ops.DeleteOrphanDeployment(ctx, c.id, reason)
			}
			if !retireFailed(ctx, r, &rem, err) {
				retired(r, rem, reason)
			}
		}
		if c.action == actionStop {
			j.Report.Stopped = append(j.Report.Stopped, rem)
		} else {
			j.Report.Deleted = append(j.Report.Deleted, rem)
		}
	}
}

// step is an orphan deployment's next retirement step.
type step struct {
	id, action string
	since      int64
}

// actionStop is a retirement's first step (report.Remediation.Action); its
// second is config.OrphanDeploymentsDelete, its end "start".
const (
	actionStop  = "stop"
	actionStart = "start"
)

// retireStopped says whether the retirement's first step is done: the record is
// retiring and its last operation is the stop, succeeded.
func retireStopped(rec *vault.Record) bool {
	op := rec.LastOperation
	return rec.Retiring != nil && op != nil && op.Type == actionStop && op.State == vault.OperationSucceeded
}

// absentThroughout says whether the platform's proof covers the whole
// retirement: absent since before its VMs were stopped, or for a whole
// period by the proof's own count (a proof that started again).
func absentThroughout(e platform.Entry, ret *vault.Retirement, now time.Time, period time.Duration) bool {
	stoppedAt, err := time.Parse(time.RFC3339, ret.StoppedAt)
	since := time.Unix(e.Since, 0)
	return (err == nil && !since.After(stoppedAt)) || now.Sub(since) >= period
}

// unretire starts again the retiring instances the platform lists again
// (in a dry run, lists them): their retirement ends when the start
// succeeds.
func unretire(ctx context.Context, r *run, j *platform.Judged) {
	var ids []string
	for id, rec := range r.seen.index {
		if rec.Retiring != nil && j.States[id] == report.InStep && !rec.OperationInProgress() {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		rem := report.Remediation{InstanceID: id, Deployment: r.seen.index[id].Deployment(id), Action: actionStart}
		reason := fmt.Sprintf("the platform lists instance %s again, whose VMs were stopped on %s to retire it", id, r.seen.index[id].Retiring.StoppedAt)
		if !r.opts.DryRun {
			var err error
			rem.TaskID, err = r.p.Ops.StartRetired(ctx, id, reason)
			if !retireFailed(ctx, r, &rem, err) {
				retired(r, rem, reason)
			}
		}
		j.Report.Started = append(j.Report.Started, rem)
	}
}

// retireFailed notes a retirement step's error in rem and, unless it is a
// refusal of the instance as it is now, in the run's errors; false for nil.
func retireFailed(ctx context.Context, r *run, rem *report.Remediation, err error) bool {
	if err == nil {
		return false
	}
	rem.Error = err.Error()
	var refused interface{ Refusal() bool }
	if !errors.As(err, &refused) {
		r.ledger.FailUnlessStopped(ctx, report.InstanceKey(rem.InstanceID),
			fmt.Errorf("instance %s: the %s of its orphan deployment: %w", rem.InstanceID, rem.Action, err))
	}
	return true
}

// retired writes a retirement step (a stop, a start, a deletion) to the
// history, the log and the webhooks.
func retired(r *run, rem report.Remediation, reason string) {
	var msg string
	switch rem.Action {
	case actionStop:
		msg = fmt.Sprintf("orphan deployment's VMs stopped (task %d) after backup %s, its deletion due in %s unless the platform lists it again: %s",
			rem.TaskID, rem.Backup, r.p.Config.Remediation.RetirementPeriod, reason)
	case actionStart:
		msg = fmt.Sprintf("retirement ended: VMs started again (task %d): %s", rem.TaskID, reason)
	default:
		msg = fmt.Sprintf("orphan deployment deleted (task %d) after backup %s: %s", rem.TaskID, rem.Backup, reason)
	}
	r.log.Warn("orphan deployment: "+rem.Action, "instance", rem.InstanceID, "deployment", rem.Deployment, "task", rem.TaskID, "backup", rem.Backup)
	r.hist.Add(rem.InstanceID, vault.Event{Kind: "remediated", Deployment: rem.Deployment, Message: msg,
		Details: map[string]string{"action": rem.Action, "backup": rem.Backup, "task_id": fmt.Sprint(rem.TaskID)}})
	r.hist.Notify(notify.Event{Type: notify.Remediated, InstanceID: rem.InstanceID, Deployment: rem.Deployment,
		Director: r.directorOf(rem.InstanceID, rem.Deployment), Reason: msg, RunID: r.id, Time: r.p.Now().UTC()})
}

// tooManyOrphans says why nothing is retired when n of the index's records
// look like orphan deployments at once: more than max_per_run, or more than
// orphan_deployments_max_share of them, whatever the fleet's size (a
// platform read that leaves instances out would drain a small fleet, or a
// large one max_per_run a run); "" when it is not too many.
func tooManyOrphans(n, records int, cfg config.RemediationConfig) string {
	if n <= cfg.MaxPerRun && float64(n) <= cfg.OrphanDeploymentsMaxShare*float64(records) {
		return ""
	}
	return fmt.Sprintf("%d of the %d instances look like orphan deployments, more than max_per_run (%d) or %.0f%% of them "+
		"(orphan_deployments_max_share): the platform read is more likely wrong (cf.broker_name, another platform's Cloud "+
		"Controller, instances left out) than the fleet; none is deleted", n, records, cfg.MaxPerRun, 100*cfg.OrphanDeploymentsMaxShare)
}
