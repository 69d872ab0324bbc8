package reconciler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

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
	Run Summary `json:"run"`
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
	s, err := m.RunOnce(ctx, RunOptions{DryRun: !apply, Force: true, Reason: "rebuild-index"})
	rep.Run = s
	if err != nil {
		return rep, fmt.Errorf("the reconciler run: %w", err)
	}
	store := m.parts.store
	idx, err := store.Index(ctx)
	if err != nil {
		return rep, err
	}
	deps, err := m.parts.listAll(ctx)
	if err != nil {
		return rep, fmt.Errorf("listing deployments: %w", err)
	}
	listed := map[string]bool{}
	for _, d := range deps {
		listed[d.Name] = true
	}
	candidates, err := m.documentedInstances(ctx)
	if err != nil {
		return rep, err
	}
	planned := map[string]bool{}
	if s.Plan != nil {
		for _, it := range slices.Concat(s.Plan.Creates, s.Plan.Updates) {
			planned[it.InstanceID] = true
		}
	}
	now := m.now()
	changes := map[string]vault.Change{}
	for _, id := range candidates {
		if idx.Records[id] != nil || planned[id] {
			continue
		}
		rec, src := m.recoverRecord(ctx, id)
		switch {
		case rec == nil:
			rep.Unrecoverable = append(rep.Unrecoverable, id)
			continue
		case listed[rec.Deployment(id)]:
			continue // the run deals with it (or reported why not)
		}
		rec.Orphaned, rec.OrphanedAt = true, stamp(now)
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
	if _, err := store.Update(ctx, changes); err != nil {
		return rep, fmt.Errorf("writing the orphans' records: %w", err)
	}
	for _, o := range rep.Orphans {
		m.appendEvent(ctx, o.InstanceID, vault.Event{Kind: "orphaned", Actor: "operator", Deployment: o.Deployment,
			Message: fmt.Sprintf("index record rebuilt from its %s; the Director does not run its deployment", o.Source)})
	}
	return rep, nil
}

// documentedInstances are the instances with documents under the mount or
// a history, sorted.
func (m *Manager) documentedInstances(ctx context.Context) ([]string, error) {
	docs, err := m.parts.store.Instances(ctx)
	if err != nil {
		return nil, err
	}
	ids := maps.Clone(docs)
	hist, err := m.parts.store.HistoryInstances(ctx)
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
func (m *Manager) recoverRecord(ctx context.Context, id string) (*vault.Record, string) {
	store := m.parts.store
	if m.removedOnPurpose(ctx, id) {
		return nil, ""
	}
	if rec, _, err := store.LatestBackupRecord(ctx, id); err == nil && rec != nil && rec.PlanID != "" {
		return rec, "backup"
	} else if err != nil && !errors.Is(err, vault.ErrNotFound) {
		m.log.Warn("rebuild-index: the newest backup's record is unreadable", "instance", id, "error", err)
	}
	if text, ok, err := store.Manifest(ctx, id); err == nil && ok {
		if info, err := parseManifest(text); err == nil {
			if p := propsFor(info, id); p != nil && p.PlanID != "" {
				return &vault.Record{ServiceID: p.ServiceID, PlanID: p.PlanID, DeploymentName: info.Name,
					OrganizationGUID: p.OrganizationGUID, SpaceGUID: p.SpaceGUID}, "manifest"
			}
		}
	}
	events, _ := store.Events(ctx, id, 0)
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
func (m *Manager) removedOnPurpose(ctx context.Context, id string) bool {
	ids, err := m.parts.store.Backups(ctx, id)
	if err != nil || len(ids) == 0 {
		return false
	}
	parts, err := m.parts.store.BackupParts(ctx, id, ids[0])
	return err == nil && parts.Removal
}

// propsFor is the manifest's properties.blacksmith (top level, else the
// first instance group's) when it names instance id.
func propsFor(info *manifestInfo, id string) *blacksmithProps {
	if p := info.Properties.Blacksmith; p != nil && p.InstanceID == id {
		return p
	}
	for _, g := range info.InstanceGroups {
		if p := g.Properties.Blacksmith; p != nil && p.InstanceID == id {
			return p
		}
	}
	return nil
}
