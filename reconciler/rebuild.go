package reconciler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/fleet"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/match"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// RebuiltOrphan is an instance whose index record the rebuild makes from its
// own documents because BOSH no longer runs its deployment: it is flagged
// orphaned (never deleted).
type RebuiltOrphan struct {
	// InstanceID is the instance.
	InstanceID string `json:"instance_id"`
	// Deployment is the deployment its record names (not listed by the Director).
	Deployment string `json:"deployment"`
	// ServiceID and PlanID are what the record gets.
	ServiceID string `json:"service_id"`
	PlanID    string `json:"plan_id"`
	// Source says where they came from: "backup" (the newest backup's
	// record, broker fields included), "manifest" (its properties.blacksmith)
	// or "history" (its provision event).
	Source string `json:"source"`
}

// RebuildReport is what RebuildIndex did, or would do.
type RebuildReport struct {
	// Applied says the index was written (false: a dry run).
	Applied bool `json:"applied"`
	// Run is the forced reconciler run that rebuilt the records of the
	// deployments BOSH runs (a dry run's plan when not applied).
	Run report.Summary `json:"run"`
	// Orphans are the records made for instances without a deployment.
	Orphans []RebuiltOrphan `json:"orphans"`
	// Unrecoverable are instances with documents in Vault from which no
	// service and plan could be told, or that were removed on purpose (a
	// deprovision, a purge: their newest backup is the removal's): listed,
	// not written.
	Unrecoverable []string `json:"unrecoverable"`
}

// RebuildIndex rebuilds the instance index from BOSH and the per-instance
// documents alone: a forced run recreates the record of every instance
// whose deployment BOSH runs (broker fields from its newest backup), and
// every other instance with documents in Vault (metadata, manifest,
// backups, history) but no record gets one from its newest backup, its
// manifest or its history, flagged orphaned. Existing records are never
// changed by the second part. apply false computes the same without
// writing (the run is a dry run).
func (m *Manager) RebuildIndex(ctx context.Context, apply bool) (RebuildReport, error) {
	rep := RebuildReport{Applied: apply, Orphans: []RebuiltOrphan{}, Unrecoverable: []string{}}
	if apply {
		release, err := m.holdLease(ctx) // the records it recreates are written outside the run
		if err != nil {
			return rep, err
		}
		defer release()
	}
	s, err := m.RunOnce(ctx, report.RunOptions{DryRun: !apply, Force: true, Reason: "rebuild-index"})
	rep.Run = s
	if err != nil {
		return rep, fmt.Errorf("the reconciler run: %w", err)
	}
	rb := rebuilder{index: m.stores.index, docs: m.stores.docs, history: m.stores.history, backups: m.stores.backups,
		directors: m.parts.Directors, now: m.now, log: m.log}
	return rb.orphans(ctx, rep, apply)
}

// rebuilder makes the index records of instances that have documents but
// no record and no deployment: orphans, from their own documents.
type rebuilder struct {
	index     records.Index
	docs      documentLister
	history   historyStore
	backups   backupStore
	directors *fleet.Directors
	now       func() time.Time
	log       *slog.Logger
}

// documentLister lists the instances with documents and reads a manifest;
// *vault.Documents has it.
type documentLister interface {
	// Instances lists the instance ids that have documents under the mount.
	Instances(ctx context.Context) (map[string]bool, error)
	// Manifest returns an instance's manifest and whether there is one.
	Manifest(ctx context.Context, id string) (string, bool, error)
}

// orphans adds to rep (whose Run is the forced run just made) the records
// of the instances with documents whose deployment is not listed, and
// writes them when apply.
func (rb rebuilder) orphans(ctx context.Context, rep RebuildReport, apply bool) (RebuildReport, error) {
	s := rep.Run
	idx, err := rb.index.Index(ctx)
	if err != nil {
		return rep, err
	}
	deps, err := rb.directors.ListAll(ctx)
	if err != nil {
		return rep, fmt.Errorf("listing deployments: %w", err)
	}
	listed := map[string]bool{}
	for _, d := range deps {
		listed[d.Name] = true
	}
	candidates, err := rb.documentedInstances(ctx)
	if err != nil {
		return rep, err
	}
	planned := map[string]bool{}
	if s.Plan != nil {
		for _, it := range slices.Concat(s.Plan.Creates, s.Plan.Updates) {
			planned[it.InstanceID] = true
		}
	}
	now := rb.now()
	changes := map[string]vault.Change{}
	for _, id := range candidates {
		if idx.Records[id] != nil || planned[id] {
			continue
		}
		rec, src := rb.recoverRecord(ctx, id)
		switch {
		case rec == nil:
			rep.Unrecoverable = append(rep.Unrecoverable, id)
			continue
		case listed[rec.Deployment(id)]:
			continue // the run deals with it (or reported why not)
		}
		rec.Orphaned, rec.OrphanedAt = true, records.Stamp(now)
		rep.Orphans = append(rep.Orphans, RebuiltOrphan{InstanceID: id, Deployment: rec.Deployment(id),
			ServiceID: rec.ServiceID, PlanID: rec.PlanID, Source: src})
		changes[id] = func(cur *vault.Record) (*vault.Record, error) {
			if cur != nil {
				return nil, nil // written meanwhile: kept as it is
			}
			return rec, nil
		}
	}
	if !apply || len(changes) == 0 {
		return rep, nil
	}
	if _, err := rb.index.Update(ctx, changes); err != nil {
		return rep, fmt.Errorf("writing the orphans' records: %w", err)
	}
	for _, o := range rep.Orphans {
		rb.appendEvent(ctx, o.InstanceID, vault.Event{Kind: "orphaned", Actor: "operator", Deployment: o.Deployment,
			Message: fmt.Sprintf("index record rebuilt from its %s; the Director does not run its deployment", o.Source)})
	}
	return rep, nil
}

// documentedInstances are the instances with documents under the mount or
// a history, sorted.
func (rb rebuilder) documentedInstances(ctx context.Context) ([]string, error) {
	docs, err := rb.docs.Instances(ctx)
	if err != nil {
		return nil, err
	}
	ids := maps.Clone(docs)
	hist, err := rb.history.HistoryInstances(ctx)
	if err != nil && len(hist) == 0 {
		return nil, fmt.Errorf("listing the instances with a history: %w", err)
	}
	for _, id := range hist {
		ids[id] = true
	}
	return slices.Sorted(maps.Keys(ids)), nil
}

// recoverRecord makes an index record for id from its newest backup, else
// its manifest's properties.blacksmith, else its history's provision event;
// nil when none tells its plan.
func (rb rebuilder) recoverRecord(ctx context.Context, id string) (*vault.Record, string) {
	if rb.removedOnPurpose(ctx, id) {
		return nil, ""
	}
	if rec, _, err := rb.backups.LatestBackupRecord(ctx, id); err == nil && rec != nil && rec.PlanID != "" {
		return rec, "backup"
	} else if err != nil && !errors.Is(err, vault.ErrNotFound) {
		rb.log.Warn("rebuild-index: the newest backup's record is unreadable", "instance", id, "error", err)
	}
	if text, ok, err := rb.docs.Manifest(ctx, id); err == nil && ok {
		if info, err := match.Parse(text); err == nil {
			if p := info.PropsFor(id); p != nil && p.PlanID != "" {
				return &vault.Record{ServiceID: p.ServiceID, PlanID: p.PlanID, DeploymentName: info.Name,
					OrganizationGUID: p.OrganizationGUID, SpaceGUID: p.SpaceGUID}, "manifest"
			}
		}
	}
	events, _ := rb.history.Events(ctx, id, 0)
	for _, e := range slices.Backward(events) { // oldest first: the provision
		if e.Kind == "provision" && e.Details["plan_id"] != "" {
			return &vault.Record{ServiceID: e.Details["service_id"], PlanID: e.Details["plan_id"],
				DeploymentName: cmp.Or(e.Deployment, vault.DeploymentName(e.Details["plan_id"], id)),
				Created:        e.Time.Unix()}, "history"
		}
	}
	return nil, ""
}

// removedOnPurpose says whether the instance's newest backup was taken by a
// removal (a deprovision, a purge): its documents stay behind (metadata,
// manifest, history), but it is no orphan to bring back.
func (rb rebuilder) removedOnPurpose(ctx context.Context, id string) bool {
	ids, err := rb.backups.Backups(ctx, id)
	if err != nil || len(ids) == 0 {
		return false
	}
	parts, err := rb.backups.BackupParts(ctx, id, ids[0])
	return err == nil && parts.Removal
}

// appendEvent records a history event; a failure is logged only.
func (rb rebuilder) appendEvent(ctx context.Context, id string, e vault.Event) {
	if err := rb.history.AppendEvent(ctx, id, e); err != nil {
		rb.log.Warn("could not record a history event", "instance", id, "kind", e.Kind, "error", err)
	}
}
