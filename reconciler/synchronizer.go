package reconciler

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// opInProgress is the state of a broker operation still running.
const opInProgress = "in progress"

// inFlightStates are the task states of a provision or deprovision still running.
var inFlightStates = []string{bosh.TaskQueued, bosh.TaskProcessing, bosh.TaskCancelling}

// indexChange is the index change of a matched instance: create the entry
// when it is missing (from the broker fields of its newest backup when
// there is one, else of its manifest), set the fields the reconciler owns,
// and un-orphan it. Every other field is kept.
func (r *run) indexChange(w *desired) *pending {
	p := &pending{id: w.match.InstanceID, eff: new(effect), w: w}
	now := r.stamp()
	p.change = func(cur *vault.Record) (*vault.Record, error) {
		*p.eff = 0
		next := cur
		if next == nil {
			next = r.newRecord(w)
			*p.eff |= effectCreated
		}
		if ownedFieldsDiffer(next, w) || next.Fingerprint != w.fingerprint {
			setOwnedFields(next, w)
			if *p.eff&effectCreated == 0 {
				*p.eff |= effectUpdated
			}
		}
		if next.Orphaned {
			next.Orphaned, next.UnorphanedAt = false, now
			*p.eff |= effectUnorphaned
		}
		if *p.eff == 0 {
			return nil, nil
		}
		next.ReconciledAt = now
		return next, nil
	}
	return p
}

// newRecord is the index entry of an instance the index lacks: the one kept
// in its newest backup, with the broker fields its manifest still holds
// where that has none.
func (r *run) newRecord(w *desired) *vault.Record {
	next := w.restored.Clone()
	if next == nil {
		next = &vault.Record{Created: r.start.Unix()}
	}
	next.Orphaned, next.OrphanedAt = false, ""
	if p := w.props; p != nil {
		next.OrganizationGUID = cmp.Or(next.OrganizationGUID, p.OrganizationGUID)
		next.SpaceGUID = cmp.Or(next.SpaceGUID, p.SpaceGUID)
		if params, ok := p.Parameters.(map[string]any); ok && next.Parameters == nil {
			next.Parameters = params
		}
	}
	return next
}

// ownedFieldsDiffer says whether rec names another service, plan or deployment than w.
func ownedFieldsDiffer(rec *vault.Record, w *desired) bool {
	return (w.serviceID != "" && rec.ServiceID != w.serviceID) || (w.planID != "" && rec.PlanID != w.planID) ||
		rec.DeploymentName != w.deployment
}

// setOwnedFields sets what the reconciler owns; an id that neither the
// matcher nor the manifest could tell is left as it is.
func setOwnedFields(rec *vault.Record, w *desired) {
	if w.serviceID != "" {
		rec.ServiceID = w.serviceID
	}
	if w.planID != "" {
		rec.PlanID = w.planID
	}
	rec.DeploymentName, rec.Fingerprint = w.deployment, w.fingerprint
}

// orphans flags the index entries whose deployment is gone: not one that
// this run matched, not one whose deployment is listed (even unmatched or
// locked), not while the broker's operation on it is in progress or a
// Director task for its deployment is queued or running, and not within the
// grace period after its creation. Entries already flagged stay as they are.
func (r *run) orphans(ctx context.Context, listed []bosh.Deployment) {
	names := make(map[string]bool, len(listed))
	for _, d := range listed {
		names[d.Name] = true
	}
	var candidates []string
	for id, rec := range r.index {
		if !r.isClaimed(id) && !rec.Orphaned && !names[deploymentOf(id, rec)] && r.mayOrphan(rec) {
			candidates = append(candidates, id)
		}
	}
	if len(candidates) == 0 {
		return
	}
	busy, err := r.busyDeployments(ctx)
	if err != nil {
		r.fail("", fmt.Errorf("no orphan flagged: %w", err))
		return
	}
	slices.Sort(candidates)
	for _, id := range candidates {
		if name := deploymentOf(id, r.index[id]); busy[name] {
			r.log.Debug("orphan candidate has a task in flight", "instance", id, "deployment", name)
			continue
		}
		r.queueIndex(r.orphanChange(id))
	}
}

// mayOrphan says whether rec may be flagged: no operation in progress, and
// past the grace period.
func (r *run) mayOrphan(rec *vault.Record) bool {
	if brokerBusy(rec) {
		return false
	}
	grace := r.m.cfg.OrphanGracePeriod
	return rec.Created == 0 || r.start.Sub(time.Unix(rec.Created, 0)) >= grace
}

// busyDeployments names the deployments with a provision, update or
// deprovision task queued or running (one Director request).
func (r *run) busyDeployments(ctx context.Context) (map[string]bool, error) {
	busy := map[string]bool{}
	if r.m.opts.Tasks == nil {
		return busy, nil
	}
	var tasks []bosh.Task
	err := retry(ctx, r.retries(ctx), r.backoff(), r.logRetry("tasks", "in flight"), func(ctx context.Context) (err error) {
		tasks, err = r.m.opts.Tasks.Tasks(ctx, bosh.TaskQuery{States: inFlightStates})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listing the Director's tasks in flight: %w", err)
	}
	for _, t := range tasks {
		busy[t.Deployment] = true
	}
	return busy, nil
}

// orphanChange flags an entry orphaned, checking again on the entry as it
// is when written.
func (r *run) orphanChange(id string) *pending {
	p := &pending{id: id, eff: new(effect)}
	now := r.stamp()
	p.change = func(cur *vault.Record) (*vault.Record, error) {
		*p.eff = 0
		if cur == nil || cur.Orphaned || !r.mayOrphan(cur) {
			return nil, nil
		}
		cur.Orphaned, cur.OrphanedAt = true, now
		*p.eff = effectOrphaned
		return cur, nil
	}
	return p
}

// deploymentOf is the deployment an index entry names, or the name the
// broker gives deployments: {planID}-{instanceID}.
func deploymentOf(id string, rec *vault.Record) string {
	if rec == nil {
		return ""
	}
	if rec.DeploymentName != "" {
		return rec.DeploymentName
	}
	return rec.PlanID + "-" + id
}

// BackupReader is optionally implemented by the Store (*vault.Store does):
// when an index entry is lost but the instance's metadata is still there,
// the updater takes the broker's fields (organization, space, parameters,
// creation time) from the instance's newest backup.
type BackupReader interface {
	// Backups lists an instance's backup ids, newest first.
	Backups(ctx context.Context, id string) ([]string, error)
	// Secret reads a document under the mount.
	Secret(ctx context.Context, path string) (map[string]any, bool, error)
}

// brokerFields returns the index record kept in the instance's newest
// backup, or nil when there is none (or the store cannot tell).
func (r *run) brokerFields(ctx context.Context, id string) (*vault.Record, error) {
	br, ok := r.m.opts.Store.(BackupReader)
	if !ok {
		return nil, nil
	}
	ids, err := br.Backups(ctx, id)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	doc, found, err := br.Secret(ctx, id+"/"+r.m.cfg.Backup.Path+"/"+ids[0])
	if err != nil || !found || doc["record"] == nil {
		return nil, err
	}
	raw, err := json.Marshal(doc["record"])
	if err != nil {
		return nil, err
	}
	var rec vault.Record
	if err := json.Unmarshal(raw, &rec); err != nil {
		r.log.Warn("backup record unreadable, broker fields not restored", "instance", id, "backup", ids[0], "error", err)
		return nil, nil
	}
	return &rec, nil
}
