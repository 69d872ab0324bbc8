package reconciler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

var (
	// ErrNoDeployer is returned by Rollback with redeploy when the Manager
	// was made without a Deployer.
	ErrNoDeployer = errors.New("no director to deploy with")
	// ErrBusy is returned by Rollback while the broker's operation on the
	// instance is in progress.
	ErrBusy = errors.New("an operation is in progress on the instance")
	// ErrRollback wraps what makes a backup unfit for a redeploy: no
	// manifest, a manifest for another deployment, a failed task.
	ErrRollback = errors.New("cannot roll back")
)

// maxHistoryShown bounds the history InstanceView shows.
const maxHistoryShown = 100

// rollbackPoll is how often a rollback asks about its deploy task.
const rollbackPoll = time.Second

// Deployer deploys a manifest through a Director task and follows it;
// *bosh.Client has it.
type Deployer interface {
	// Deploy creates or updates the deployment the manifest names.
	Deploy(ctx context.Context, manifest []byte) (bosh.Task, error)
	// WaitTask polls a task until it ends.
	WaitTask(ctx context.Context, id int, poll time.Duration) (bosh.Task, error)
}

// Inspector reads what InstanceView shows and what Rollback needs;
// *vault.Store has it.
type Inspector interface {
	// Record is an instance's index record, nil when absent.
	Record(ctx context.Context, id string) (*vault.Record, error)
	// Backups lists an instance's backups, newest first.
	Backups(ctx context.Context, id string) ([]string, error)
	// Events is an instance's history, newest first.
	Events(ctx context.Context, id string, limit int) ([]vault.Event, error)
	// BackupManifest is the manifest a backup holds.
	BackupManifest(ctx context.Context, id, backupID string) (string, bool, error)
	// BackupAll backs up every record and secret of an instance.
	BackupAll(ctx context.Context, id string) (string, error)
	// Restore puts a backup back in Vault.
	Restore(ctx context.Context, id, backupID string) error
	// BackupParts says what a backup holds (and whether a removal took it).
	BackupParts(ctx context.Context, id, backupID string) (vault.BackupContents, error)
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
	Quarantine *Quarantined `json:"quarantine"`
	// Backups are its backup ids, newest first.
	Backups []string `json:"backups"`
	// History is its history, newest first (at most 100 events).
	History []vault.Event `json:"history"`
	// Problems are what could not be read (the rest is shown).
	Problems []string `json:"problems"`
}

// Instance returns what is known of instance id: nil when it has neither a
// record nor a history. What cannot be read is listed in Problems.
func (m *Manager) Instance(ctx context.Context, id string) (*InstanceView, error) {
	v := &InstanceView{InstanceID: id, Backups: []string{}, History: []vault.Event{}, Problems: []string{}}
	rec, err := m.parts.store.Record(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("reading the record of %s: %w", id, err)
	}
	if rec != nil {
		v.Record, v.Deployment = rec, rec.Deployment(id)
		v.Match = &RecordedMatch{Strategy: rec.MatchStrategy, Confidence: rec.MatchConfidence, Rule: rec.MatchRule}
	}
	if v.History, err = m.parts.store.Events(ctx, id, maxHistoryShown); err != nil {
		v.Problems = append(v.Problems, "history: "+err.Error())
	}
	if v.History == nil {
		v.History = []vault.Event{}
	}
	v.History = m.withCreated(ctx, id, v.History, &v.Problems)
	if rec == nil && len(v.History) == 0 {
		return nil, nil
	}
	if b, err := m.parts.store.Backups(ctx, id); err != nil {
		v.Problems = append(v.Problems, "backups: "+err.Error())
	} else if b != nil {
		v.Backups = b
	}
	v.Quarantine = m.quarantineOf(ctx, id, v.Deployment, &v.Problems)
	return v, nil
}

// withCreated adds, when the history has no start (a provision or a created
// event), the "created" entry the reconciler kept in the instance's
// metadata document when it found the instance (it writes no event of its
// own for that: a cold run creates thousands).
func (m *Manager) withCreated(ctx context.Context, id string, events []vault.Event, problems *[]string) []vault.Event {
	if slices.ContainsFunc(events, func(e vault.Event) bool { return e.Kind == "provision" || e.Kind == "created" }) {
		return events
	}
	md, err := m.parts.store.Metadata(ctx, id)
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
		return append(events, vault.Event{Time: at, Kind: "created", Actor: actorReconciler,
			Message: h.Detail + " (kept in the metadata document)", Details: map[string]string{"manifest_sha256": h.ManifestSHA256}})
	}
	return events
}

// quarantineOf reads the quarantine and returns the item of the instance
// (or of its deployment).
func (m *Manager) quarantineOf(ctx context.Context, id, deployment string, problems *[]string) *Quarantined {
	q := newQuarantine(m.cfg.Quarantine, m.now(), RunOptions{})
	if err := q.load(ctx, m.parts.store); err != nil {
		*problems = append(*problems, "quarantine: "+err.Error())
		return nil
	}
	for _, key := range []string{instanceKey(id), deploymentKey(deployment)} {
		if it, ok := q.items[key]; ok {
			return it
		}
	}
	return nil
}

// Runs returns the newest runs of the run log (at most limit, 0: all).
func (m *Manager) Runs(ctx context.Context, limit int) ([]Summary, error) {
	entries, err := m.parts.store.Runs(ctx, limit)
	out := make([]Summary, 0, len(entries))
	for _, e := range entries {
		var s Summary
		if uerr := json.Unmarshal(e.Summary, &s); uerr != nil {
			err = errors.Join(err, fmt.Errorf("run %s: %w", e.ID, uerr))
			continue
		}
		out = append(out, s)
	}
	return out, err
}

// RollbackResult is what Rollback did.
type RollbackResult struct {
	// InstanceID is the instance.
	InstanceID string `json:"instance_id"`
	// Backup is the backup put back.
	Backup string `json:"backup"`
	// SafetyBackup is the backup of the state before the rollback (to undo it).
	SafetyBackup string `json:"safety_backup,omitempty"`
	// Redeployed says the backup's manifest was deployed first.
	Redeployed bool `json:"redeployed"`
	// TaskID is the Director task of the redeploy.
	TaskID int `json:"task_id,omitempty"`
	// Deployment is the deployment redeployed.
	Deployment string `json:"deployment,omitempty"`
	// Note says what happens next.
	Note string `json:"note"`
}

// Rollback puts backup backupID of instance id back (the newest when
// empty). With redeploy it first deploys the backup's manifest to the
// Director through a task and waits for it, so that BOSH runs what the
// records say and the next run has nothing to undo; without, it repairs
// Vault only and the next run re-derives the manifest from BOSH. It holds
// the run lock (no run interleaves), refuses while the broker's operation on
// the instance is in progress, and backs the current state up first.
func (m *Manager) Rollback(ctx context.Context, id, backupID string, redeploy bool) (RollbackResult, error) {
	res := RollbackResult{InstanceID: id, Backup: backupID}
	if redeploy && m.deployer == nil {
		return res, ErrNoDeployer
	}
	release, err := m.holdLease(ctx) // with HA, only the leader changes records (no run of another daemon interleaves)
	if err != nil {
		return res, err
	}
	defer release()
	select {
	case m.runLock <- struct{}{}:
	case <-ctx.Done():
		return res, fmt.Errorf("waiting for the run in progress: %w", ctx.Err())
	}
	defer func() { <-m.runLock }()
	store := m.parts.store
	rec, err := store.Record(ctx, id)
	if err != nil {
		return res, fmt.Errorf("reading the record of %s: %w", id, err)
	}
	if rec.OperationInProgress() {
		return res, fmt.Errorf("%w: %s %s", ErrBusy, rec.LastOperation.Type, rec.LastOperation.State)
	}
	var dep Deployer
	if redeploy {
		if dep = m.parts.deployerOf(rec); dep == nil {
			return res, fmt.Errorf("%w: the instance's Director %q is not configured", ErrNoDeployer, rec.Director)
		}
	}
	if res.Backup == "" {
		ids, err := store.Backups(ctx, id)
		if err != nil {
			return res, err
		}
		if len(ids) == 0 {
			return res, fmt.Errorf("%w: instance %s has no backup", vault.ErrNotFound, id)
		}
		res.Backup = ids[0]
	}
	var manifest string
	if redeploy {
		if manifest, res.Deployment, err = m.rollbackManifest(ctx, id, res.Backup, rec); err != nil {
			return res, err
		}
	}
	if res.SafetyBackup, err = store.BackupAll(ctx, id); err != nil && !errors.Is(err, vault.ErrNotFound) {
		return res, fmt.Errorf("backing up the current state first: %w", err)
	}
	if redeploy {
		if err := m.redeploy(ctx, dep, id, manifest, &res); err != nil {
			return res, err
		}
	}
	if err := store.Restore(ctx, id, res.Backup); err != nil && !errors.Is(err, vault.ErrEventNotRecorded) {
		return res, fmt.Errorf("restoring backup %s: %w", res.Backup, err)
	}
	res.Note = "Vault records restored; the next reconciler run re-derives the manifest from BOSH"
	if redeploy {
		res.Note = "the backup's manifest is deployed and the Vault records restored: the next reconciler run finds nothing to undo"
		m.parts.scanner.cache.Delete(res.Deployment)
	}
	m.log.Info("instance rolled back", "instance", id, "backup", res.Backup, "redeployed", redeploy, "task", res.TaskID)
	return res, nil
}

// rollbackManifest is the backup's manifest, when it is fit to deploy: it
// exists and names the deployment of the instance's record.
func (m *Manager) rollbackManifest(ctx context.Context, id, backupID string, rec *vault.Record) (text, name string, err error) {
	text, ok, err := m.parts.store.BackupManifest(ctx, id, backupID)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", fmt.Errorf("%w: backup %s of %s holds no manifest", ErrRollback, backupID, id)
	}
	want := rec.Deployment(id)
	if err := namesDeployment(text, want, "the manifest of backup "+backupID); err != nil {
		return "", "", err
	}
	return text, want, nil
}

// namesDeployment checks that a manifest about to be deployed (what names
// it in errors) is the one of deployment want: ErrRollback otherwise.
func namesDeployment(text, want, what string) error {
	info, err := parseManifest(text)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrRollback, what, err)
	}
	if want == "" || info.Name != want {
		return fmt.Errorf("%w: %s names deployment %q, the instance's record names %q", ErrRollback, what, info.Name, want)
	}
	return nil
}

// redeploy deploys the manifest with dep (the instance's Director) and waits for its task; the history says
// how it ended.
func (m *Manager) redeploy(ctx context.Context, dep Deployer, id, manifest string, res *RollbackResult) error {
	task, err := dep.Deploy(bosh.WithContextID(ctx, "blacksmith-rollback-"+id), []byte(manifest))
	if err != nil {
		return fmt.Errorf("deploying the manifest of backup %s: %w", res.Backup, err)
	}
	res.TaskID = task.ID
	if task, err = dep.WaitTask(ctx, task.ID, rollbackPoll); err != nil {
		return fmt.Errorf("waiting for task %d: %w", task.ID, err)
	}
	details := map[string]string{"backup": res.Backup, "task_id": fmt.Sprint(task.ID), "safety_backup": res.SafetyBackup}
	if task.State != bosh.TaskDone {
		m.appendEvent(ctx, id, vault.Event{Kind: "redeploy_failed", Actor: "operator", Deployment: res.Deployment,
			Message: fmt.Sprintf("task %d ended %s: %s; the Vault records were not changed", task.ID, task.State, task.Result),
			Details: details})
		return fmt.Errorf("%w: task %d ended %s: %s; the Vault records were not changed", ErrRollback, task.ID, task.State, task.Result)
	}
	res.Redeployed = true
	m.appendEvent(ctx, id, vault.Event{Kind: "redeployed", Actor: "operator", Deployment: res.Deployment,
		Message: fmt.Sprintf("manifest of backup %s deployed by task %d", res.Backup, task.ID), Details: details})
	return nil
}

// appendEvent records a history event; a failure is logged only.
func (m *Manager) appendEvent(ctx context.Context, id string, e vault.Event) {
	if err := m.parts.store.AppendEvent(ctx, id, e); err != nil {
		m.log.Warn("could not record a history event", "instance", id, "kind", e.Kind, "error", err)
	}
}
