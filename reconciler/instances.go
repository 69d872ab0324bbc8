package reconciler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/catalog"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/platform"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/run"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// maxHistoryShown bounds the history InstanceView shows.
const maxHistoryShown = 100

// recordReader reads an instance's index record; *vault.Indexes has it.
type recordReader interface {
	// Record is an instance's index record, nil when absent.
	Record(ctx context.Context, id string) (*vault.Record, error)
}

// metadataReader reads an instance's metadata; *vault.Documents has it.
type metadataReader interface {
	// Metadata is an instance's metadata, nil when absent.
	Metadata(ctx context.Context, id string) (*vault.Metadata, error)
}

// historyStore reads and adds to instances' histories; *vault.History has it.
type historyStore interface {
	// Events is an instance's history, newest first.
	Events(ctx context.Context, id string, limit int) ([]vault.Event, error)
	// AppendEvent adds an event to an instance's history.
	AppendEvent(ctx context.Context, id string, e vault.Event) error
	// HistoryInstances lists the instances that have a history.
	HistoryInstances(ctx context.Context) ([]string, error)
}

// backupStore lists and reads an instance's backups; *vault.Archive has it.
type backupStore interface {
	// Backups lists an instance's backups, newest first.
	Backups(ctx context.Context, id string) ([]string, error)
	// BackupParts says what a backup holds (and whether a removal took it).
	BackupParts(ctx context.Context, id, backupID string) (vault.BackupContents, error)
	// BackupManifest is the manifest a backup holds.
	BackupManifest(ctx context.Context, id, backupID string) (string, bool, error)
	// BackupRecord is the index record a backup holds, nil when none.
	BackupRecord(ctx context.Context, id, backupID string) (*vault.Record, error)
	// LatestBackupRecord is the record kept in the newest backup, nil when none.
	LatestBackupRecord(ctx context.Context, id string) (*vault.Record, string, error)
}

// backupTaker takes an instance's whole backup; *vault.Archive has it.
type backupTaker interface {
	// BackupAll backs up every record and secret of an instance.
	BackupAll(ctx context.Context, id string) (string, error)
	// BackupRunning is BackupAll with the manifest the Director runs.
	BackupRunning(ctx context.Context, id, running string) (string, error)
}

// restorer puts an instance's backup back; *vault.Restores has it.
type restorer interface {
	// RestoreReported puts a backup back in Vault, saying what it did with the bindings.
	RestoreReported(ctx context.Context, id, backupID string) (vault.RestoreReport, error)
}

// RecordedMatch is how the reconciler tied the instance to its deployment,
// as its index record keeps it.
type RecordedMatch struct {
	// Strategy is "name", "metadata", "release" or "rule"; empty when the
	// record was not written by a reconciler that records it.
	Strategy string `json:"strategy"`
	// Confidence is how sure the strategy is, from 0 to 1.
	Confidence float64 `json:"confidence"`
	// Rule names the configured rule (strategy "rule").
	Rule string `json:"rule,omitempty"`
}

// InstanceView is what the reconciler knows of one instance.
type InstanceView struct {
	// InstanceID is the instance.
	InstanceID string `json:"instance_id"`
	// Deployment is the BOSH deployment its record names.
	Deployment string `json:"deployment,omitempty"`
	// Record is its index record; nil when the index has none.
	Record *vault.Record `json:"record"`
	// Match is how the reconciler matched it; nil without a record.
	Match *RecordedMatch `json:"match"`
	// Quarantine is its quarantine state; nil when it is not quarantined.
	Quarantine *report.Quarantined `json:"quarantine"`
	// Backups are its backup ids, newest first.
	Backups []string `json:"backups"`
	// BackupContents say what the newest 20 backups hold, newest first.
	BackupContents []InstanceBackup `json:"backup_contents"`
	// History is its history, newest first (at most 100 events).
	History []vault.Event `json:"history"`
	// Health is what the Directors said of its VMs when last asked.
	Health InstanceHealth `json:"health"`
	// Version is the maintenance_info version it was last deployed with
	// and its plan's, and what it is behind its Director on; nil when its
	// plan declares none and it is behind on nothing (or it has no record).
	Version *InstanceVersion `json:"version,omitempty"`
	// Platform is the platform's record of it, as the last whole read of
	// the platform found it (absent: no platform configured).
	Platform *InstancePlatform `json:"platform,omitempty"`
	// LostBindings are its bindings whose credentials are gone from Vault
	// and could not be put back, by binding id, with why (absent: none).
	LostBindings map[string]string `json:"lost_bindings,omitempty"`
	// Bindings are its bindings as the broker keeps them (the first 100,
	// in the order they were made), each with its state, never its
	// credentials; BindingsTotal counts them all.
	Bindings      []InstanceBinding `json:"bindings"`
	BindingsTotal int               `json:"bindings_total"`
	// Problems are what could not be read (the rest is shown).
	Problems []string `json:"problems"`
}

// InstanceVersion is what an instance runs against what its plan deploys.
type InstanceVersion struct {
	// Recorded is the version it was last deployed with ("": unknown,
	// adopted or migrated); Plan is its plan's.
	Recorded string `json:"recorded"`
	Plan     string `json:"plan"`
	// Outdated says Recorded is older than Plan, or unknown.
	Outdated bool `json:"outdated"`
	// Behind are the releases and stemcells its manifest asks for as the
	// latest that its Director has in a newer version than its deployment
	// runs, as the last complete run of this daemon found them (absent:
	// none, or no such run yet).
	Behind []report.Lag `json:"behind,omitempty"`
}

// InstanceHealth is what the Directors said of an instance's VMs.
type InstanceHealth struct {
	// Status is "unhealthy" when a VM of it that should run did not when
	// last asked (a process failing, its agent not answering), "unknown"
	// when the health document cannot be read, else "healthy" (asked and
	// running, or not asked yet: see reconciler.health_sweep and the health loop).
	Status string `json:"status"`
	// Since is when it was first found unhealthy; CheckedAt when last.
	Since     *time.Time `json:"since,omitempty"`
	CheckedAt *time.Time `json:"checked_at,omitempty"`
	// Reason says what is wrong; VMs are the VMs that do not run.
	Reason string               `json:"reason,omitempty"`
	VMs    []report.UnhealthyVM `json:"vms,omitempty"`
}

// Instance returns what is known of instance id: nil when it has neither a
// record nor a history. What cannot be read is listed in Problems.
func (v *Views) Instance(ctx context.Context, id string) (*InstanceView, error) {
	in := inspector{records: v.stores.records, metadata: v.stores.metadata, history: v.stores.history, backups: v.stores.backups,
		state: v.stores.state, quarantine: v.cfg.Quarantine, now: v.now, catalog: v.parts.Catalog, behind: v.status.behindOf,
		platform: v.parts.Platform, secrets: v.stores.secrets}
	return in.view(ctx, id)
}

// inspector reads what the instance view shows.
type inspector struct {
	records    recordReader
	metadata   metadataReader
	history    historyStore
	backups    backupStore
	state      memory.StateStore
	quarantine config.QuarantineConfig
	now        func() time.Time
	catalog    *catalog.Catalog             // nil: no version shown
	behind     func(id string) []report.Lag // nil: none shown
	platform   *platform.Tracker            // nil: no platform
	secrets    secretReader                 // nil: no bindings shown
}

// view is what is known of instance id (see Instance).
func (in inspector) view(ctx context.Context, id string) (*InstanceView, error) {
	v := &InstanceView{InstanceID: id, Backups: []string{}, BackupContents: []InstanceBackup{}, History: []vault.Event{},
		Bindings: []InstanceBinding{}, Problems: []string{}}
	rec, err := in.records.Record(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading the record of %s: %w", id, err)
	}
	if rec != nil {
		v.Record, v.Deployment = rec, rec.Deployment(id)
		v.Match = &RecordedMatch{Strategy: rec.MatchStrategy, Confidence: rec.MatchConfidence, Rule: rec.MatchRule}
	}
	if v.History, err = in.history.Events(ctx, id, maxHistoryShown); err != nil {
		v.Problems = append(v.Problems, "history: "+err.Error())
	}
	if v.History == nil {
		v.History = []vault.Event{}
	}
	v.History = in.withCreated(ctx, id, v.History, &v.Problems)
	v.Platform = platformOf(ctx, in.platform, in.state, id, &v.Problems)
	var bindings run.BindingsDoc
	if _, err := in.state.ReadState(ctx, run.BindingsDocName, &bindings); err != nil {
		v.Problems = append(v.Problems, "bindings: "+err.Error())
	} else if lost := bindings.Lost[id]; len(lost) > 0 {
		v.LostBindings = lost
	}
	if rec == nil && len(v.History) == 0 && (v.Platform == nil || v.Platform.Record == nil) {
		return nil, nil // a platform-only instance is shown: the broker lost it
	}
	v.Bindings, v.BindingsTotal = bindingsOf(ctx, in.secrets, id, v.LostBindings, &v.Problems)
	if b, err := in.backups.Backups(ctx, id); err != nil {
		v.Problems = append(v.Problems, "backups: "+err.Error())
	} else if b != nil {
		v.Backups = b
		v.BackupContents = backupsOf(ctx, in.backups, id, b)
	}
	v.Quarantine = in.quarantineOf(ctx, id, v.Deployment, &v.Problems)
	v.Health = in.healthOf(ctx, id, &v.Problems)
	if rec != nil && in.catalog != nil {
		if _, plan, ok := in.catalog.Plan(rec.PlanID); ok && plan.MaintenanceInfo != nil {
			want := plan.MaintenanceInfo.Version
			v.Version = &InstanceVersion{Recorded: rec.MaintenanceVersion, Plan: want,
				Outdated: rec.MaintenanceVersion == "" || catalog.CompareVersions(rec.MaintenanceVersion, want) < 0}
		}
	}
	if rec != nil && in.behind != nil {
		if lags := in.behind(id); len(lags) > 0 {
			if v.Version == nil {
				v.Version = &InstanceVersion{}
			}
			v.Version.Behind = lags
		}
	}
	return v, nil
}

// healthOf is the instance's health as the health document keeps it.
func (in inspector) healthOf(ctx context.Context, id string, problems *[]string) InstanceHealth {
	var doc health.Doc
	if _, err := in.state.ReadState(ctx, health.DocName, &doc); err != nil {
		*problems = append(*problems, "health: "+err.Error())
		return InstanceHealth{Status: "unknown"}
	}
	e, ok := doc.Unhealthy[id]
	if !ok {
		return InstanceHealth{Status: "healthy"}
	}
	return InstanceHealth{Status: "unhealthy", Since: &e.Since, CheckedAt: &e.CheckedAt, Reason: e.Reason(), VMs: e.VMs}
}

// withCreated adds, when the history has no start (a provision or a created
// event), the "created" entry the reconciler kept in the instance's
// metadata document when it found the instance (it writes no event of its
// own for that: a cold run creates thousands).
func (in inspector) withCreated(ctx context.Context, id string, events []vault.Event, problems *[]string) []vault.Event {
	if slices.ContainsFunc(events, func(e vault.Event) bool { return e.Kind == "provision" || e.Kind == "created" }) {
		return events
	}
	md, err := in.metadata.Metadata(ctx, id)
	if err != nil {
		*problems = append(*problems, "metadata: "+err.Error())
		return events
	}
	if md == nil {
		return events
	}
	for _, h := range md.History {
		if h.Action != "created" {
			continue
		}
		at, _ := time.Parse(time.RFC3339, h.Time)
		return append(events, vault.Event{Time: at, Kind: "created", Actor: memory.ActorReconciler,
			Message: h.Detail + " (kept in the metadata document)", Details: map[string]string{"manifest_sha256": h.ManifestSHA256}})
	}
	return events
}

// quarantineOf reads the quarantine and returns the item of the instance
// (or of its deployment).
func (in inspector) quarantineOf(ctx context.Context, id, deployment string, problems *[]string) *report.Quarantined {
	q := memory.NewQuarantine(memory.Policy{Quarantine: in.quarantine}, in.now(), report.RunOptions{})
	if err := q.Load(ctx, in.state); err != nil {
		*problems = append(*problems, "quarantine: "+err.Error())
		return nil
	}
	for _, key := range []string{report.InstanceKey(id), report.DeploymentKey(deployment)} {
		if it := q.Item(key); it != nil {
			return it
		}
	}
	return nil
}
