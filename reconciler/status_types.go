package reconciler

import "time"

// Status is the reconciler's state, ready to be served as JSON.
type Status struct {
	// Enabled is reconciler.enabled.
	Enabled bool `json:"enabled"`
	// Leader says this daemon runs the reconciler (always, without HA).
	Leader bool `json:"leader"`
	// LeaderID and LeaderSince say which daemon leads and since when (HA only).
	LeaderID    string    `json:"leader_id,omitempty"`
	LeaderSince time.Time `json:"leader_since,omitzero"`
	// Running says a run is in progress.
	Running bool `json:"running"`
	// RunID identifies the run in progress.
	RunID string `json:"run_id,omitempty"`
	// Phase is the phase of the run in progress, or "idle".
	Phase string `json:"phase"`
	// Progress is the progress of the run in progress.
	Progress Progress `json:"progress"`
	// LastRun is the summary of the last run that was not a dry run.
	LastRun *Summary `json:"last_run,omitempty"`
	// Metrics are the run counters.
	Metrics Snapshot `json:"metrics"`
	// Orphans are the orphaned records the last run saw.
	Orphans []Orphan `json:"orphans"`
	// Unmatched are the deployments the last run could not match.
	Unmatched []Unmatched `json:"unmatched"`
	// Conflicts are the conflicting claims the last run saw.
	Conflicts []Conflict `json:"conflicts"`
	// Quarantined are the items set aside after the last complete run.
	Quarantined []Quarantined `json:"quarantined"`
	// Converged is the last run's (see Summary.Converged).
	Converged bool `json:"converged"`
	// Blockers are the last run's (see Summary.Blockers).
	Blockers []string `json:"blockers"`
}
