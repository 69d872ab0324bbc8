package vault

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Record is one instance's index entry. Fields this package does not know are
// kept raw in Extra and written back unchanged on every write. So is a known
// field stored as null, as its zero value (e.g. "orphaned": false) or with an
// unexpected JSON type; setting the field to a non-zero value replaces it.
type Record struct {
	ServiceID      string `json:"service_id"`
	PlanID         string `json:"plan_id"`
	DeploymentName string `json:"deployment_name,omitempty"`
	Created        int64  `json:"created,omitempty"` // unix seconds

	// Broker fields.
	OrganizationGUID string         `json:"organization_guid,omitempty"`
	SpaceGUID        string         `json:"space_guid,omitempty"`
	Parameters       map[string]any `json:"parameters,omitempty"`
	LastOperation    *Operation     `json:"last_operation,omitempty"`
	// MaintenanceVersion is the plan's maintenance_info version the
	// instance's manifest was last rendered from; "" when the plan declared
	// none.
	MaintenanceVersion string `json:"maintenance_info_version,omitempty"`
	// Context is what the platform last said of the instance (the OSB
	// context of its provision, update or bind): its platform, organization
	// and space guids and names, its own name. Shown to operators, never
	// used to authorise anything.
	Context map[string]string `json:"context,omitempty"`

	// Reconciler fields.
	ReconciledAt string `json:"reconciled_at,omitempty"` // RFC 3339
	Orphaned     bool   `json:"orphaned,omitempty"`
	OrphanedAt   string `json:"orphaned_at,omitempty"`
	UnorphanedAt string `json:"unorphaned_at,omitempty"`
	// Fingerprint is a digest of what the reconciler last wrote; it lets a
	// warm run skip reading metadata.
	Fingerprint string `json:"reconciler_fingerprint,omitempty"`
	// MatchStrategy, MatchConfidence and MatchRule say how the reconciler
	// tied the deployment to the instance: "name", "metadata", "release" or
	// "rule", how sure it is (0 to 1), and the configured rule (rule only).
	MatchStrategy   string  `json:"match_strategy,omitempty"`
	MatchConfidence float64 `json:"match_confidence,omitempty"`
	MatchRule       string  `json:"match_rule,omitempty"`
	// RemediatedAt is when the reconciler last tried to bring an orphan's
	// deployment back (RFC 3339); it tries again only min_age later.
	RemediatedAt string `json:"remediated_at,omitempty"`
	// Director names the BOSH Director (bosh.name) the instance's deployment
	// lives on; "" for the first (and, with one Director, only) one.
	Director string `json:"director,omitempty"`
	// Adopted says the reconciler made the record from what a Director runs
	// (the broker had no record of the instance) and no operator has
	// confirmed it yet: the broker neither binds, updates nor deletes such
	// an instance, and it counts against no limit. AdoptedAt is when the
	// reconciler made it, AdoptionConfirmedAt when an operator confirmed it
	// (RFC 3339). A record without Adopted is owned: the reconciler never
	// moves it to another deployment or Director.
	Adopted             bool   `json:"adopted,omitempty"`
	AdoptedAt           string `json:"adopted_at,omitempty"`
	AdoptionConfirmedAt string `json:"adoption_confirmed_at,omitempty"`
	// Retiring is set while the reconciler retires the instance's deployment
	// as an orphan deployment (the platform does not list the instance): its
	// VMs stopped, its deletion due once the platform has not listed it
	// again for a period; nil otherwise.
	Retiring *Retirement `json:"retiring,omitempty"`

	// Extra holds every field not above, preserved byte for byte.
	Extra map[string]json.RawMessage `json:"-"`
}

// The states of an Operation.
const (
	OperationInProgress = "in progress"
	OperationSucceeded  = "succeeded"
	OperationFailed     = "failed"
)

// DeploymentName is the name the broker gives an instance's BOSH
// deployment: {planID}-{instanceID}.
func DeploymentName(planID, instanceID string) string { return planID + "-" + instanceID }

// Deployment is the BOSH deployment the record of instance id names: its
// deployment_name, else DeploymentName of its plan; "" for a nil record.
func (r *Record) Deployment(id string) string {
	if r == nil {
		return ""
	}
	if r.DeploymentName != "" {
		return r.DeploymentName
	}
	return DeploymentName(r.PlanID, id)
}

// Owned says whether the record is the broker's (or an operator confirmed
// it): its deployment and Director are never moved by what a Director
// lists. False for a nil record and for one adopted and not yet confirmed.
func (r *Record) Owned() bool { return r != nil && !r.Adopted }

// OperationInProgress says whether the record's last broker operation is
// still running; false for a nil record.
func (r *Record) OperationInProgress() bool {
	return r != nil && r.LastOperation != nil && r.LastOperation.State == OperationInProgress
}

// RetireContextPrefix begins the context id of a deprovision the reconciler
// started (an orphan deployment deleted): no platform polls it, so the
// reconciler's next run settles it, without waiting for it to be stuck.
const RetireContextPrefix = "blacksmith-retire-"

// Retirement is the first step of an orphan deployment's retirement: its
// VMs stopped (persistent disks kept), its deletion due after DeleteAfter
// unless the platform lists the instance again before then, which starts
// it again and ends the retirement.
type Retirement struct {
	// StoppedAt is when the reconciler stopped its VMs (RFC 3339).
	StoppedAt string `json:"stopped_at"`
	// DeleteAfter is when its deletion is due (RFC 3339).
	DeleteAfter string `json:"delete_after"`
	// Backup is the backup of what ran, taken before the stop.
	Backup string `json:"backup,omitempty"`
	// Reason is why: the platform's reads that did not list it.
	Reason string `json:"reason,omitempty"`
}

// Due says whether the retirement's deletion is due at now; a time that
// does not parse is never due.
func (r *Retirement) Due(now time.Time) bool {
	if r == nil {
		return false
	}
	t, err := time.Parse(time.RFC3339, r.DeleteAfter)
	return err == nil && !now.Before(t)
}

// Operation is the broker's last asynchronous operation on an instance.
type Operation struct {
	Type        string `json:"type"`  // "provision", "update", "deprovision", or the reconciler's "stop" and "start"
	State       string `json:"state"` // OperationInProgress, OperationSucceeded or OperationFailed
	TaskID      int    `json:"task_id,omitempty"`
	Description string `json:"description,omitempty"`
	StartedAt   string `json:"started_at,omitempty"` // RFC 3339
	ContextID   string `json:"context_id,omitempty"`
	// Pending is what the operation asks of the record, applied to it
	// (Apply) only once its task has succeeded: a failed operation leaves
	// the record as it was last applied. nil: nothing.
	Pending *Pending `json:"pending,omitempty"`
	// Errand is the post-deploy errand whose task TaskID is, once the
	// operation's deploy succeeded; ErrandsLeft are those to run after it.
	// "" and nil: the operation's task is its deploy (or delete).
	Errand      string   `json:"errand,omitempty"`
	ErrandsLeft []string `json:"errands_left,omitempty"`
	// Extra holds fields not above, preserved byte for byte.
	Extra map[string]json.RawMessage `json:"-"`
}

// Pending is what an update asks the record to become: its plan,
// parameters, maintenance_info version and platform context.
type Pending struct {
	PlanID             string            `json:"plan_id"`
	Parameters         map[string]any    `json:"parameters,omitempty"`
	MaintenanceVersion string            `json:"maintenance_info_version,omitempty"`
	Context            map[string]string `json:"context,omitempty"`
}

// UnmarshalJSON decodes a pending change, its parameters' numbers kept
// as json.Number (as a record's are).
func (p *Pending) UnmarshalJSON(data []byte) error {
	type plain Pending
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v plain
	if err := dec.Decode(&v); err != nil {
		return err
	}
	*p = Pending(v)
	return nil
}

// Apply makes r what p asks (nil: nothing changes).
func (p *Pending) Apply(r *Record) {
	if p == nil {
		return
	}
	r.PlanID, r.Parameters, r.MaintenanceVersion = p.PlanID, cloneMap(p.Parameters), p.MaintenanceVersion
	if p.Context != nil {
		r.Context = maps.Clone(p.Context)
	}
}

func (r *Record) fields() []field { return r.fieldsTo(nil) }

// fieldsTo appends the record's fields to dst (a caller's array, so that
// decoding the index allocates no list per record).
func (r *Record) fieldsTo(dst []field) []field {
	return append(dst,
		field{"service_id", &r.ServiceID, true},
		field{"plan_id", &r.PlanID, true},
		field{"deployment_name", &r.DeploymentName, false},
		field{"created", &r.Created, false},
		field{"organization_guid", &r.OrganizationGUID, false},
		field{"space_guid", &r.SpaceGUID, false},
		field{"parameters", &r.Parameters, false},
		field{"last_operation", &r.LastOperation, false},
		field{"maintenance_info_version", &r.MaintenanceVersion, false},
		field{"context", &r.Context, false},
		field{"reconciled_at", &r.ReconciledAt, false},
		field{"orphaned", &r.Orphaned, false},
		field{"orphaned_at", &r.OrphanedAt, false},
		field{"unorphaned_at", &r.UnorphanedAt, false},
		field{"reconciler_fingerprint", &r.Fingerprint, false},
		field{"match_strategy", &r.MatchStrategy, false},
		field{"match_confidence", &r.MatchConfidence, false},
		field{"match_rule", &r.MatchRule, false},
		field{"remediated_at", &r.RemediatedAt, false},
		field{"director", &r.Director, false},
		field{"adopted", &r.Adopted, false},
		field{"adopted_at", &r.AdoptedAt, false},
		field{"adoption_confirmed_at", &r.AdoptionConfirmedAt, false},
		field{"retiring", &r.Retiring, false},
	)
}

// UnmarshalJSON decodes a record. Only a value that is not a JSON object is an
// error; a known field of the wrong type is kept raw in Extra.
func (r *Record) UnmarshalJSON(data []byte) error {
	*r = Record{}
	return decodeInto(data, r.fields(), &r.Extra)
}

// MarshalJSON encodes the known fields and Extra as one JSON object with
// sorted keys, so an unchanged record encodes to the same bytes.
func (r Record) MarshalJSON() ([]byte, error) {
	return encodeObject(r.fields(), r.Extra)
}

// Clone returns a deep copy of r (nil for nil).
func (r *Record) Clone() *Record {
	if r == nil {
		return nil
	}
	c := *r
	c.Parameters = cloneMap(r.Parameters)
	c.Context = maps.Clone(r.Context)
	c.LastOperation = r.LastOperation.clone()
	if r.Retiring != nil {
		ret := *r.Retiring
		c.Retiring = &ret
	}
	c.Extra = cloneExtra(r.Extra)
	return &c
}

func (o *Operation) fields() []field {
	return []field{
		{"type", &o.Type, true},
		{"state", &o.State, true},
		{"task_id", &o.TaskID, false},
		{"description", &o.Description, false},
		{"started_at", &o.StartedAt, false},
		{"context_id", &o.ContextID, false},
		{"pending", &o.Pending, false},
		{"errand", &o.Errand, false},
		{"errands_left", &o.ErrandsLeft, false},
	}
}

// UnmarshalJSON decodes an operation, keeping unknown fields in Extra.
func (o *Operation) UnmarshalJSON(data []byte) error {
	*o = Operation{}
	return decodeInto(data, o.fields(), &o.Extra)
}

// MarshalJSON encodes the known fields and Extra.
func (o Operation) MarshalJSON() ([]byte, error) {
	return encodeObject(o.fields(), o.Extra)
}

func (o *Operation) clone() *Operation {
	if o == nil {
		return nil
	}
	c := *o
	c.Extra = cloneExtra(o.Extra)
	c.ErrandsLeft = slices.Clone(o.ErrandsLeft)
	if o.Pending != nil {
		p := *o.Pending
		p.Parameters, p.Context = cloneMap(o.Pending.Parameters), maps.Clone(o.Pending.Context)
		c.Pending = &p
	}
	return &c
}

// decodeRecord decodes one index entry and reports, as *RecordError, a value
// that is not an object (rec nil) or fields kept raw because of their type.
func decodeRecord(path, id string, raw json.RawMessage) (*Record, []error) {
	var r Record
	var buf [24]field
	extra, mismatch, err := decodeObject(raw, r.fieldsTo(buf[:0]))
	if err != nil {
		return nil, []error{&RecordError{Path: path, ID: id, Err: err}}
	}
	r.Extra = extra
	var problems []error
	for _, f := range mismatch {
		problems = append(problems, &RecordError{Path: path, ID: id, Field: f,
			Err: fmt.Errorf("unexpected JSON type: %s", snippet(extra[f]))})
	}
	return &r, problems
}
