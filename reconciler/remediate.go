package reconciler

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// Remover removes an instance's records after a full backup, as a
// deprovision does; *vault.Store has it.
type Remover interface {
	RemoveAll(ctx context.Context, id string) (string, error)
}

// remediable lists the orphans the run may remediate, oldest orphan first,
// at most Remediation.MaxPerRun: flagged for at least MinAge, not
// remediated within MinAge, no broker operation in progress, its deployment
// still not listed and its Director listed, within the run's scope.
func (r *run) remediable() []string {
	cfg := r.parts.cfg.Remediation
	type cand struct {
		id    string
		since time.Time
	}
	var out []cand
	for id, rec := range r.index {
		if !rec.Orphaned || rec.OperationInProgress() || r.listed[rec.Deployment(id)] || r.unknown(rec) ||
			!r.opts.Scope.CoversRecord(id, rec) {
			continue
		}
		since, err := time.Parse(time.RFC3339, rec.OrphanedAt)
		if err != nil || r.start.Sub(since) < cfg.MinAge {
			continue
		}
		if at, err := time.Parse(time.RFC3339, rec.RemediatedAt); err == nil && r.start.Sub(at) < cfg.MinAge {
			continue
		}
		out = append(out, cand{id, since})
	}
	slices.SortFunc(out, func(a, b cand) int { return cmp.Or(a.since.Compare(b.since), cmp.Compare(a.id, b.id)) })
	ids := make([]string, 0, min(len(out), cfg.MaxPerRun))
	for _, c := range out[:min(len(out), cfg.MaxPerRun)] {
		ids = append(ids, c.id)
	}
	return ids
}

// remediate applies reconciler.remediation to the orphans it allows (a dry
// run only lists them); each action is in the summary, the instance's
// history and a "remediated" notification.
func (r *run) remediate(ctx context.Context) {
	mode := r.parts.cfg.Remediation.Mode
	if mode == "" || mode == config.RemediateNone {
		return
	}
	done := []Remediation{}
	for _, id := range r.remediable() {
		if ctx.Err() != nil {
			break
		}
		rem := Remediation{InstanceID: id, Deployment: r.index[id].Deployment(id), Action: mode}
		if !r.opts.DryRun {
			var err error
			switch mode {
			case config.RemediateRedeploy:
				rem.TaskID, err = r.redeployOrphan(ctx, id, rem.Deployment)
			case config.RemediatePurge:
				rem.Backup, err = r.parts.store.RemoveAll(ctx, id)
			}
			if err != nil {
				rem.Error = err.Error()
				r.state.failUnlessStopped(ctx, instanceKey(id), fmt.Errorf("instance %s: remediation (%s): %w", id, mode, err))
			} else {
				r.recordRemediation(rem)
			}
		}
		done = append(done, rem)
	}
	r.state.count(func(s *Summary) { s.Remediated = done })
}

// redeployOrphan deploys the manifest Vault holds for the orphan, through a
// task it does not wait for (the next runs see the deployment come back),
// and stamps the attempt on the record so that it is not tried again
// before min_age.
func (r *run) redeployOrphan(ctx context.Context, id, name string) (int, error) {
	dep := r.parts.deployerOf(r.index[id])
	if dep == nil {
		return 0, ErrNoDeployer
	}
	text, ok, err := r.parts.store.Manifest(ctx, id)
	switch {
	case err != nil:
		return 0, err
	case !ok:
		return 0, fmt.Errorf("%w: Vault holds no manifest for it", ErrRollback)
	}
	if err := namesDeployment(text, name, "its stored manifest"); err != nil {
		return 0, err
	}
	stamp := stamp(r.start)
	if _, err := r.parts.store.Update(ctx, map[string]vault.Change{id: func(cur *vault.Record) (*vault.Record, error) {
		if cur == nil || !cur.Orphaned {
			return nil, nil
		}
		cur.RemediatedAt = stamp
		return cur, nil
	}}); err != nil {
		return 0, fmt.Errorf("stamping the attempt: %w", err)
	}
	task, err := dep.Deploy(bosh.WithContextID(ctx, "blacksmith-remediate-"+id), []byte(text))
	if err != nil {
		return 0, fmt.Errorf("deploying its stored manifest: %w", err)
	}
	return task.ID, nil
}

// recordRemediation writes the history event and the notification.
func (r *run) recordRemediation(rem Remediation) {
	msg := fmt.Sprintf("orphan redeployed from the manifest Vault holds (task %d)", rem.TaskID)
	if rem.Action == config.RemediatePurge {
		msg = fmt.Sprintf("orphan purged: its records removed after backup %s", rem.Backup)
	}
	r.log.Warn("orphan remediated", "instance", rem.InstanceID, "deployment", rem.Deployment, "action", rem.Action,
		"task", rem.TaskID, "backup", rem.Backup)
	r.hist.add(rem.InstanceID, vault.Event{Kind: "remediated", Deployment: rem.Deployment, Message: msg,
		Details: map[string]string{"action": rem.Action, "backup": rem.Backup, "task_id": fmt.Sprint(rem.TaskID)}})
	if r.hist != nil && r.hist.notifier != nil {
		r.hist.notifier.Notify(notify.Event{Type: notify.Remediated, InstanceID: rem.InstanceID, Deployment: rem.Deployment,
			Director: r.hist.directorName(rem.InstanceID, rem.Deployment), Reason: msg, RunID: r.id})
	}
}
