package upgrade

import (
	"time"
)

// The states of one instance in a fleet upgrade. Current, Upgraded and
// Unchanged leave the instance at its plan's version; the others do not.
const (
	// Pending: not tried (yet, or the fleet upgrade stopped before it).
	Pending = "pending"
	// InFlight: its upgrade is under way.
	InFlight = "in_flight"
	// Upgraded: the plan's current manifest was deployed and recorded.
	Upgraded = "upgraded"
	// Unchanged: the plan's current manifest is what runs; only the
	// version was recorded, nothing deployed.
	Unchanged = "unchanged"
	// Current: the instance was at its plan's version when its turn came.
	Current = "current"
	// Skipped: not upgraded, for Reason (an operation in progress at every
	// attempt, quarantined, orphaned, adopted, its Director unreachable, a
	// manifest changed behind the broker's back).
	Skipped = "skipped"
	// Failed: nothing was deployed, for Reason (the templates do not
	// render, the backup or the Director's deploy failed).
	Failed = "failed"
	// RolledBack: the upgrade's task failed; the manifest of the backup
	// taken before it was deployed again.
	RolledBack = "rolled_back"
	// RollbackFailed: the upgrade's task failed and so did the rollback.
	RollbackFailed = "rollback_failed"
	// ErrandFailed: the plan's current manifest was deployed and recorded,
	// then one of the plan's post-deploy errands failed (Reason quotes
	// it); nothing was rolled back.
	ErrandFailed = "errand_failed"
	// Interrupted: the wait for its task was cut (the daemon stopping, the
	// task timeout); its operation stays in progress and the next fleet
	// upgrade finishes it.
	Interrupted = "interrupted"
	// WouldUpgrade and WouldRecord are a dry run's: a deploy, or only the
	// version recorded (the rendering is what runs).
	WouldUpgrade = "would_upgrade"
	WouldRecord  = "would_record"

	// busy is an attempt that found the instance's operation in progress:
	// tried again later, up to the attempt limit.
	busy = "busy"
)

// AtVersion says whether an instance in state s runs its plan's version.
func AtVersion(s string) bool { return s == Current || s == Upgraded || s == Unchanged }

// Failure says whether s counts against the fleet's failures.
func Failure(s string) bool {
	return s == Failed || s == RolledBack || s == RollbackFailed || s == ErrandFailed
}

// Result is what a fleet upgrade did to one instance.
type Result struct {
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

// Rules are the fleet rules of one fleet upgrade.
type Rules struct {
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

// Scope selects the instances of a fleet upgrade; an empty field selects
// every one.
type Scope struct {
	Service   string   `json:"service,omitempty"`
	Plan      string   `json:"plan,omitempty"`
	Director  string   `json:"director,omitempty"`
	Instances []string `json:"instances,omitempty"`
}
