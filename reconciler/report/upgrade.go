package report

import (
	"cmp"
	"slices"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The states of one instance in a fleet upgrade (UpgradeResult.State).
// UpgradeCurrent, UpgradeUpgraded and UpgradeUnchanged leave the instance
// at its plan's version; the others do not.
const (
	// UpgradePending: not tried (yet, or the fleet upgrade stopped before it).
	UpgradePending = "pending"
	// UpgradeInFlight: its upgrade is under way.
	UpgradeInFlight = "in_flight"
	// UpgradeUpgraded: the plan's current manifest was deployed and recorded.
	UpgradeUpgraded = "upgraded"
	// UpgradeUnchanged: the plan's current manifest is what runs; only the
	// version was recorded, nothing deployed.
	UpgradeUnchanged = "unchanged"
	// UpgradeCurrent: the instance was at its plan's version when its turn
	// came.
	UpgradeCurrent = "current"
	// UpgradeSkipped: not upgraded, for Reason (an operation in progress at
	// every attempt, quarantined, orphaned, adopted, its Director
	// unreachable, a manifest changed behind the broker's back).
	UpgradeSkipped = "skipped"
	// UpgradeFailed: nothing was deployed, for Reason (the templates do not
	// render, the backup or the Director's deploy failed).
	UpgradeFailed = "failed"
	// UpgradeRolledBack: the upgrade's task failed; the manifest of the backup
	// taken before it was deployed again.
	UpgradeRolledBack = "rolled_back"
	// UpgradeRollbackFailed: the upgrade's task failed and so did the rollback.
	UpgradeRollbackFailed = "rollback_failed"
	// UpgradeErrandFailed: the plan's current manifest was deployed and
	// recorded, then one of the plan's post-deploy errands failed (Reason
	// quotes it); nothing was rolled back.
	UpgradeErrandFailed = "errand_failed"
	// UpgradeInterrupted: the wait for its task was cut (the daemon
	// stopping, the task timeout); its operation stays in progress and the
	// next fleet upgrade finishes it.
	UpgradeInterrupted = "interrupted"
	// UpgradeWouldUpgrade and UpgradeWouldRecord are a dry run's: a deploy,
	// or only the version recorded (the rendering is what runs).
	UpgradeWouldUpgrade = "would_upgrade"
	UpgradeWouldRecord  = "would_record"
)

// UpgradeAtVersion says whether an instance in state s runs its plan's version.
func UpgradeAtVersion(s string) bool {
	return s == UpgradeCurrent || s == UpgradeUpgraded || s == UpgradeUnchanged
}

// UpgradeFailure says whether s counts against the fleet's failures.
func UpgradeFailure(s string) bool {
	return s == UpgradeFailed || s == UpgradeRolledBack || s == UpgradeRollbackFailed || s == UpgradeErrandFailed
}

// UpgradeResult is what a fleet upgrade did to one instance.
type UpgradeResult struct {
	InstanceID string `json:"instance_id"`
	Deployment string `json:"deployment"`
	Director   string `json:"director,omitempty"`
	ServiceID  string `json:"service_id"`
	PlanID     string `json:"plan_id"`
	// From is the version the instance ran ("" unknown), To its plan's.
	From string `json:"from"`
	To   string `json:"to"`
	// State is one of the states above; Reason says why, when it is not
	// plain.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Canary says it was one of the canaries.
	Canary bool `json:"canary,omitempty"`
	// Attempts counts the tries (more than one when it was busy).
	Attempts int `json:"attempts,omitempty"`
	// TaskID is the upgrade's Director task, RollbackTaskID the rollback's.
	TaskID         int `json:"task_id,omitempty"`
	RollbackTaskID int `json:"rollback_task_id,omitempty"`
	// Backup is the backup taken before the deploy.
	Backup    string    `json:"backup,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
}

// UpgradeRules are the fleet rules of one fleet upgrade.
type UpgradeRules struct {
	// Canaries are upgraded first; the others wait until that many were
	// upgraded, and none starts after a canary failed. 0: none.
	Canaries int `json:"canaries"`
	// MaxInFlight bounds the upgrades under way at once (at least 1).
	MaxInFlight int `json:"max_in_flight"`
	// MaxFailures stops new starts once that many failed; 0: no limit.
	MaxFailures int `json:"max_failures"`
	// AttemptLimit is how often a busy instance is tried (at least 1).
	AttemptLimit int `json:"attempt_limit"`
	// MaxInstances bounds the instances tried; 0: no bound (the
	// background mode's max_per_run).
	MaxInstances int `json:"max_instances,omitempty"`
	// RetryDelay is the wait before a busy instance is tried again.
	RetryDelay time.Duration `json:"-"`
}

// UpgradeScope selects the instances of a fleet upgrade; an empty field
// selects every one.
type UpgradeScope struct {
	Service   string   `json:"service,omitempty"`
	Plan      string   `json:"plan,omitempty"`
	Director  string   `json:"director,omitempty"`
	Instances []string `json:"instances,omitempty"`
}

// Holds says whether the scope takes instance id of record rec.
func (s UpgradeScope) Holds(id string, rec *vault.Record, first string) bool {
	switch {
	case s.Service != "" && rec.ServiceID != s.Service,
		s.Plan != "" && rec.PlanID != s.Plan,
		s.Director != "" && cmp.Or(rec.Director, first) != s.Director,
		len(s.Instances) > 0 && !slices.Contains(s.Instances, id):
		return false
	}
	return true
}

// Triggers of a fleet upgrade (UpgradeReport.Trigger).
const (
	UpgradeByOperator   = "operator"   // POST /b/upgrades
	UpgradeByBackground = "background" // reconciler.upgrades.mode auto
	UpgradeByCommand    = "command"    // blacksmith upgrade-all
)

// UpgradeReport is one fleet upgrade: what it was asked, and what it did
// to each instance in scope.
type UpgradeReport struct {
	ID      string       `json:"id"`
	Trigger string       `json:"trigger"`
	DryRun  bool         `json:"dry_run"`
	Rules   UpgradeRules `json:"rules"`
	Scope   UpgradeScope `json:"scope"`
	// Allow are the classes of guarded change the operator allowed for
	// this fleet upgrade (operation.Guarded); each instance's history
	// records the changes they let through.
	Allow     []string  `json:"allow,omitempty"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at,omitzero"`
	Running   bool      `json:"running"`
	// Stopped says why no more upgrades were started before the end of the
	// list (a canary failed, max_failures, the window closed, stopping).
	Stopped string `json:"stopped,omitempty"`
	// Error says why the fleet upgrade could not start (the index or the
	// journal could not be read).
	Error string `json:"error,omitempty"`
	// Counts are the instances by state.
	Counts map[string]int `json:"counts"`
	// Resumed are the upgrades cut short before, finished first.
	Resumed []UpgradeResult `json:"resumed,omitempty"`
	// Instances are the instances in scope: those set aside first (by
	// id), then the candidates in the order they are tried.
	Instances []UpgradeResult `json:"instances"`
}

// Done says the fleet upgrade could start and every instance in its scope
// is at its plan's version at its end (a dry run: would be). The upgrades
// it finished first (Resumed) count through their instance's place in
// scope, if any.
func (r UpgradeReport) Done() bool {
	if r.Error != "" {
		return false
	}
	for _, i := range r.Instances {
		if !UpgradeAtVersion(i.State) && !(r.DryRun && (i.State == UpgradeWouldUpgrade || i.State == UpgradeWouldRecord)) {
			return false
		}
	}
	return true
}

// UpgradeEntry is an upgrade under way: enough to finish it after a restart.
type UpgradeEntry struct {
	InstanceID string `json:"instance_id"`
	// ContextID is the operation the upgrade marks the record with (and
	// its task's context id).
	ContextID  string `json:"context_id"`
	Deployment string `json:"deployment"`
	Director   string `json:"director,omitempty"` // as the record names it
	ServiceID  string `json:"service_id"`
	PlanID     string `json:"plan_id"`
	From       string `json:"from"`
	To         string `json:"to"`
	// Backup is the backup taken before the deploy: the rollback deploys
	// its manifest.
	Backup string `json:"backup"`
	// ManifestSHA256 is the digest of the manifest deployed.
	ManifestSHA256 string `json:"manifest_sha256"`
	// Previous is the record's operation before the upgrade, put back at
	// its end.
	Previous  *vault.Operation `json:"previous_operation,omitempty"`
	StartedAt time.Time        `json:"started_at"`
	// Fleet is the fleet upgrade that started it.
	Fleet string `json:"fleet"`
}

// UpgradeQuarantined is an instance set aside after its upgrade failed.
type UpgradeQuarantined struct {
	InstanceID  string    `json:"instance_id"`
	Failures    int       `json:"failures"`
	Version     string    `json:"version"` // the version that failed
	State       string    `json:"state"`   // failed, rolled_back, rollback_failed, errand_failed
	Reason      string    `json:"reason"`
	Since       time.Time `json:"since"`
	NextAttempt time.Time `json:"next_attempt"`
}
