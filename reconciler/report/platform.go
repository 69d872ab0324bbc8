package report

import "time"

// The platform view's states (PlatformReport.State).
const (
	// PlatformKnown: the Cloud Controller was read whole, by this run or,
	// between two reads (cf.check_interval), by an earlier one (Fresh false).
	PlatformKnown = "known"
	// PlatformUnknown: the Cloud Controller could not be read whole; nothing
	// is called an orphan deployment or a platform-only instance from it.
	PlatformUnknown = "unknown"
)

// An instance's state against the platform (PlatformInstance.State).
const (
	// InStep: the platform, Vault and the Director all have it.
	InStep = "in_step"
	// OrphanDeployment: Vault and the Director have it, the platform does
	// not: nobody will ever deprovision it.
	OrphanDeployment = "orphan_deployment"
	// PlatformOnly: the platform has it, Vault does not: the broker lost it.
	PlatformOnly = "platform_only"
	// OrphanOnPlatform: the platform and Vault have it, its deployment is
	// gone (an orphan, with the platform's record beside it).
	OrphanOnPlatform = "orphan"
	// Creating: the platform has it in a create in progress or failed, Vault
	// does not: no orphan of either kind.
	Creating = "creating"
	// NotPlatforms: Vault and the Director have it and the platform read
	// does not list it, but could not have: its plan is none of the plans
	// the platform lists for this broker, or its record says another
	// platform made it (its context). Reported, never retired.
	NotPlatforms = "not_the_platforms"
	// Absent: an orphan the platform does not have either: its records
	// are Vault's alone (safe to purge, as far as the platform goes).
	Absent = "absent"
)

// MaxPlatformListed bounds each list of a PlatformReport; the counts are whole.
const MaxPlatformListed = 100

// PlatformReport is what a run found holding the instances against the
// platform's (the Cloud Controller's): absent when no platform is
// configured.
type PlatformReport struct {
	// State is PlatformKnown or PlatformUnknown; Reason says why unknown.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Fresh says this run read the platform; false: the view is an earlier
	// run's (ReadAt), reported and never acted on.
	Fresh bool `json:"fresh"`
	// ReadAt is when the view was read (zero: never whole).
	ReadAt time.Time `json:"read_at,omitzero"`
	// Requests and Seconds are this run's read of the Cloud Controller.
	Requests int     `json:"requests"`
	Seconds  float64 `json:"seconds"`
	// Plans and Instances are the broker's plans and managed instances the
	// platform lists.
	Plans     int `json:"plans"`
	Instances int `json:"instances"`
	// Counts are the instances in each state (InStep, OrphanDeployment,
	// PlatformOnly, OrphanOnPlatform, Creating); Unchecked are the records
	// not judged: on a Director out of the run, created after the view was
	// read, within the orphan grace period or with an operation in progress.
	Counts    map[string]int `json:"counts"`
	Unchecked int            `json:"unchecked"`
	// OrphanDeployments and PlatformOnly are the first MaxPlatformListed of
	// each, by instance id.
	OrphanDeployments []PlatformInstance `json:"orphan_deployments"`
	PlatformOnly      []PlatformInstance `json:"platform_only"`
	// Stopped are the orphan deployments whose VMs this run stopped (the
	// first step of their retirement), Started the retiring ones it started
	// again (the platform lists them again), Deleted the ones it deleted
	// (the second step, their retirement_period over); in a dry run, what
	// it would do. Refused says why none was stopped or deleted, when some
	// were ready.
	Stopped []Remediation `json:"stopped,omitempty"`
	Started []Remediation `json:"started,omitempty"`
	Deleted []Remediation `json:"deleted,omitempty"`
	Refused string        `json:"refused,omitempty"`
}

// PlatformInstance is one instance as the cross-check saw it.
type PlatformInstance struct {
	InstanceID string `json:"instance_id"`
	State      string `json:"state"`
	// Deployment, PlanID and Director are Vault's (PlanID the platform's for
	// a platform-only instance).
	Deployment string `json:"deployment,omitempty"`
	PlanID     string `json:"plan_id,omitempty"`
	Director   string `json:"director,omitempty"`
	// Platform is the platform's record; nil when it has none.
	Platform *PlatformRecord `json:"platform,omitempty"`
	// AbsentSince is the first read of the platform without the orphan
	// deployment, Reads how many reads since have not found it.
	AbsentSince time.Time `json:"absent_since,omitzero"`
	Reads       int       `json:"reads,omitempty"`
	// DeleteAfter is, for an orphan deployment whose VMs are stopped (its
	// retirement's first step), when its deletion is due.
	DeleteAfter time.Time `json:"delete_after,omitzero"`
	// Restorable says what a platform-only instance can be restored from:
	// "deployment" (the next runs adopt it), "backup" (blacksmith restore)
	// or "nothing".
	Restorable string `json:"restorable,omitempty"`
}

// PlatformRecord is the platform's record of an instance.
type PlatformRecord struct {
	Name         string    `json:"name"`
	Space        string    `json:"space,omitempty"`
	SpaceGUID    string    `json:"space_guid,omitempty"`
	Organization string    `json:"organization,omitempty"`
	PlanID       string    `json:"plan_id,omitempty"`
	Operation    string    `json:"last_operation,omitempty"` // e.g. "create succeeded"
	UpdatedAt    time.Time `json:"updated_at,omitzero"`
}

// BindingsReport is what a run found of the bindings of the instances it
// checked (a share of the fleet each run, in turn).
type BindingsReport struct {
	// Instances and Bindings are how many this run checked.
	Instances int `json:"instances"`
	Bindings  int `json:"bindings"`
	// Restored are the bindings this run put back; Unlisted how many it
	// took off an instance's list (unbound).
	Restored []RestoredBinding `json:"restored"`
	Unlisted int               `json:"unlisted"`
	// Lost are the bindings that could not be put back, as every run so far
	// left them (the first MaxPlatformListed; LostTotal all of them).
	Lost      []LostBinding `json:"lost"`
	LostTotal int           `json:"lost_total"`
}

// RestoredBinding is a binding whose credentials a run put back.
type RestoredBinding struct {
	InstanceID string `json:"instance_id"`
	BindingID  string `json:"binding_id"`
	From       string `json:"from"`
}

// LostBinding is a binding whose credentials are gone and could not be put back.
type LostBinding struct {
	InstanceID string `json:"instance_id"`
	BindingID  string `json:"binding_id"`
	Reason     string `json:"reason"`
}
