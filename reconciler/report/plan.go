package report

// Record kinds a plan item names.
const (
	RecordIndex    = "index"
	RecordMetadata = "metadata"
	RecordManifest = "manifest"
)

// Plan is what a dry run would have done. Items are sorted by instance id.
type Plan struct {
	// Creates are instances that have no index record yet.
	Creates []PlanItem `json:"creates"`
	// Updates are instances whose records differ from what BOSH runs.
	Updates []PlanItem `json:"updates"`
	// Orphans are index records that would be flagged orphaned.
	Orphans []PlanOrphan `json:"orphans"`
	// Unorphans are orphaned index records whose deployment is back.
	Unorphans []PlanOrphan `json:"unorphans"`
	// Backups are the instances that would be backed up before their change.
	Backups []string `json:"backups"`
}

// PlanItem is one instance a dry run would write records for.
type PlanItem struct {
	// InstanceID is the service instance.
	InstanceID string `json:"instance_id"`
	// Deployment is its BOSH deployment.
	Deployment string `json:"deployment"`
	// ServiceID is the service the index record gets: the one the manifest's
	// properties.blacksmith names for the instance, else the matcher's.
	ServiceID string `json:"service_id"`
	// PlanID is the plan the index record gets, found as ServiceID is.
	PlanID string `json:"plan_id"`
	// Strategy is the matcher strategy that found the instance.
	Strategy Strategy `json:"strategy"`
	// Confidence is how sure the strategy is, from 0 to 1.
	Confidence float64 `json:"confidence"`
	// Records are the records that would be written: index, metadata, manifest.
	Records []string `json:"records"`
	// Drift says the manifest differs from the one recorded.
	Drift bool `json:"drift,omitempty"`
}

// PlanOrphan is an index record whose orphaned flag would change.
type PlanOrphan struct {
	// InstanceID is the service instance.
	InstanceID string `json:"instance_id"`
	// Deployment is the deployment that is missing (or back).
	Deployment string `json:"deployment"`
}

// Empty says the plan would change nothing.
func (p *Plan) Empty() bool {
	return len(p.Creates)+len(p.Updates)+len(p.Orphans)+len(p.Unorphans) == 0
}
