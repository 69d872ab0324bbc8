package report

import "time"

// Quarantined is a deployment or instance that failed in runs in a row
// after its in-run retries: later runs skip it until NextAttempt, or until
// the operator asks for it (RunOptions.Instances, RunOptions.RetryQuarantined).
type Quarantined struct {
	// Deployment is the deployment whose fetch or match failed, or the
	// deployment of the instance whose records could not be written.
	Deployment string `json:"deployment,omitempty"`
	// InstanceID is the instance, when known.
	InstanceID string `json:"instance_id,omitempty"`
	// Failures counts the runs in a row it failed in.
	Failures int `json:"failures"`
	// LastError is the last failure (at most 256 bytes).
	LastError string `json:"last_error"`
	// Since is when it first failed.
	Since time.Time `json:"since"`
	// LastFailedAt is when it last failed.
	LastFailedAt time.Time `json:"last_failed_at"`
	// NextAttempt is when a run tries it again.
	NextAttempt time.Time `json:"next_attempt"`
}

// Key names the item as failures do: "deployment NAME" or "instance ID".
func (q *Quarantined) Key() string {
	if q.Deployment != "" {
		return DeploymentKey(q.Deployment)
	}
	return InstanceKey(q.InstanceID)
}

// DeploymentKey and InstanceKey name what a failure concerns, in the
// summary's failure count and in the quarantine.
func DeploymentKey(name string) string { return "deployment " + name }

// InstanceKey names an instance's failures (see DeploymentKey).
func InstanceKey(id string) string { return "instance " + id }

// Settled is a broker operation the reconciler found in progress for longer
// than reconciler.stuck_operation_after, and what became of it.
type Settled struct {
	// InstanceID is the instance.
	InstanceID string `json:"instance_id"`
	// Type is the operation: provision, update or deprovision.
	Type string `json:"type"`
	// StartedAt is when it started, as recorded ("" when unknown).
	StartedAt string `json:"started_at,omitempty"`
	// State is what it is now: "in progress" (its task still runs, or the
	// Director could not be asked), "succeeded", "failed" or "gone".
	State string `json:"state"`
	// Description is what the platform's next last_operation reads.
	Description string `json:"description"`
}

// Remediation is what the run did (or, in a dry run, would do) to an orphan.
type Remediation struct {
	// InstanceID is the orphan.
	InstanceID string `json:"instance_id"`
	// Deployment is its deployment, gone from the Director.
	Deployment string `json:"deployment"`
	// Action is "redeploy" or "purge".
	Action string `json:"action"`
	// TaskID is the redeploy's Director task.
	TaskID int `json:"task_id,omitempty"`
	// Backup is the backup a purge took first.
	Backup string `json:"backup,omitempty"`
	// Error says why it could not be done.
	Error string `json:"error,omitempty"`
}
