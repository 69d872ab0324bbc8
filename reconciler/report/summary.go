package report

import (
	"time"

	"github.com/blacksmith-reconciler/blacksmith/internal/textcut"
)

// Phases of a run, as Status reports them.
const (
	PhaseIdle        = "idle"
	PhaseScanning    = "scanning"
	PhaseUpdating    = "updating"
	PhaseOrphans     = "orphans"
	PhaseRemediating = "remediating"
	PhasePlatform    = "platform"
	PhaseBindings    = "bindings"
	PhaseQuarantine  = "quarantine"
	PhaseHealth      = "health"
	PhaseOutdated    = "outdated"
)

// PhaseTime is how long one of a run's phases took.
type PhaseTime struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
}

// RunOptions says what kind of run to make.
type RunOptions struct {
	// DryRun computes the plan and writes nothing.
	DryRun bool `json:"dry_run"`
	// Force clears the scanner's cache first, so every manifest is fetched
	// again, and trusts no fingerprint, so every instance's records are read again.
	Force bool `json:"force"`
	// Reason says why the run was asked for (logged and kept in the summary).
	Reason string `json:"reason,omitempty"`
	// Instances are instance ids the run tries even when they are quarantined.
	Instances []string `json:"instances,omitempty"`
	// RetryQuarantined tries every quarantined item, whatever its backoff.
	RetryQuarantined bool `json:"retry_quarantined,omitempty"`
	// Scope limits the run: only the deployments in scope are fetched, only
	// their records written, orphans looked for only among the records in
	// scope. The zero Scope is everything.
	Scope Scope `json:"scope,omitempty"`
}

// Summary is the outcome of one run.
type Summary struct {
	// RunID identifies the run in logs and in the answers to Trigger.
	RunID string `json:"run_id"`
	// DryRun says the run wrote nothing and computed Plan; its counts
	// (Created, Updated, Orphaned, ...) say what it would have done.
	DryRun bool `json:"dry_run"`
	// Forced says the scanner's cache was cleared first.
	Forced bool `json:"forced"`
	// Reason is why the run was asked for.
	Reason string `json:"reason,omitempty"`
	// Scope is the part of the estate the run covered (absent: everything).
	Scope *Scope `json:"scope,omitempty"`
	// OutOfScope is the number of listed deployments the scope left out.
	OutOfScope int `json:"out_of_scope,omitempty"`
	// StartedAt is when the run started.
	StartedAt time.Time `json:"started_at"`
	// Duration is how long it took (in JSON as duration_seconds only: a Go
	// duration would encode as nanoseconds).
	Duration time.Duration `json:"-"`
	// DurationSeconds is Duration in seconds.
	DurationSeconds float64 `json:"duration_seconds"`
	// Phases are the run's phases it went through, in order, with how long
	// each took.
	Phases []PhaseTime `json:"phases"`
	// DeploymentsSeen is the number of deployments the Director listed.
	DeploymentsSeen int `json:"deployments_seen"`
	// Ignored is the number of them reconciler.ignore names (left alone).
	Ignored int `json:"ignored"`
	// Matched is the number of deployments tied to a service instance.
	Matched int `json:"matched"`
	// MatchedBy counts the matched deployments by strategy.
	MatchedBy map[Strategy]int `json:"matched_by"`
	// Unmatched is the number of deployments no strategy could tie to an
	// instance, or only below reconciler.min_confidence.
	Unmatched int `json:"unmatched"`
	// Foreign is how many of them are not the broker's (no instance UUID
	// in the name, no properties.blacksmith, no release of the broker's
	// services, no rule): they do not keep the run from converging.
	Foreign int `json:"foreign"`
	// LowConfidence are the matches below reconciler.min_confidence:
	// reported, not written.
	LowConfidence []LowConfidence `json:"low_confidence"`
	// Busy is the number of deployments skipped because a task holds their
	// lock, their first deploy has not run yet (no manifest), or the
	// broker's operation on their instance is in progress.
	Busy int `json:"busy"`
	// InstancesSynced is the number of instances whose records were written.
	InstancesSynced int `json:"instances_synced"`
	// Created is the number of index records created.
	Created int `json:"created"`
	// Updated is the number of index records changed for a matched instance.
	Updated int `json:"updated"`
	// Orphaned is the number of records flagged orphaned by this run.
	Orphaned int `json:"orphaned"`
	// Unorphaned is the number of records whose deployment came back.
	Unorphaned int `json:"unorphaned"`
	// OrphansTotal is the number of orphaned records after the run.
	OrphansTotal int `json:"orphans_total"`
	// Failed is the number of instances (or deployments, when they could not
	// be fetched) that could not be brought in step.
	Failed int `json:"failed"`
	// Writes is the number of Vault writes (records, backups) the run made.
	Writes int `json:"writes"`
	// Backups is the number of backups made before a change.
	Backups int `json:"backups"`
	// ManifestsFetched is the number of manifests fetched from the Director.
	ManifestsFetched int `json:"manifests_fetched"`
	// Feed says how the run used the Director's event feed (with several
	// Directors, all of them: see Directors for each).
	Feed FeedReport `json:"feed"`
	// Directors says what the run saw of each Director (with one, of it).
	Directors []DirectorReport `json:"directors,omitempty"`
	// Unknown is the number of records whose Director could not be listed:
	// the run cannot tell whether their deployments exist, and flags none
	// of them orphaned.
	Unknown int `json:"unknown"`
	// Drift is the number of manifests found changed behind the broker's back.
	Drift int `json:"drift"`
	// Drifted names the instances whose manifest was found changed (the
	// first MaxDrifted), each with what changed; absent when none.
	Drifted []Drifted `json:"drifted,omitempty"`
	// Errors are the errors met, one line each (the first 100).
	Errors []string `json:"errors"`
	// ErrorCount is the number of errors met.
	ErrorCount int `json:"error_count"`
	// Conflicts are the deployments that claimed an instance another
	// deployment of the run won, sorted by instance id and loser; nothing is
	// written for them.
	Conflicts []Conflict `json:"conflicts"`
	// Quarantined are the items this run skipped because they are
	// quarantined (failed in earlier runs; see Quarantined).
	Quarantined []Quarantined `json:"quarantined"`
	// NewlyQuarantined are the items this run failed on and set aside.
	NewlyQuarantined []Quarantined `json:"newly_quarantined"`
	// Excused is how many items failed on transient faults while the
	// Directors were failing (a storm): not quarantined, tried again next run.
	Excused int `json:"excused,omitempty"`
	// QuarantinedTotal is the number of items in quarantine after the run.
	QuarantinedTotal int `json:"quarantined_total"`
	// Released are the items that left the quarantine in this run.
	Released []Quarantined `json:"released"`
	// Remediated are the orphans reconciler.remediation acted on (a dry run:
	// would act on).
	Remediated []Remediation `json:"remediated"`
	// Health is what the run asked of the VMs' health (absent: nothing).
	Health *HealthReport `json:"health,omitempty"`
	// Outdated are the instances that do not run what their plan now
	// deploys (absent: a dry or scoped run, which does not look).
	Outdated *OutdatedReport `json:"outdated,omitempty"`
	// Platform is the instances held against the platform's (absent: no
	// platform configured, or a scoped run).
	Platform *PlatformReport `json:"platform,omitempty"`
	// Bindings is what the run found of the bindings it checked (absent: a
	// dry or scoped run, or no broker).
	Bindings *BindingsReport `json:"bindings,omitempty"`
	// Index is the index re-shard the run made (absent: none was due).
	Index *IndexReport `json:"index,omitempty"`
	// Settled are the broker operations found in progress for longer than
	// reconciler.stuck_operation_after, and what became of them.
	Settled []Settled `json:"settled"`
	// HistoryEvents is the number of history events the run recorded;
	// HistoryFailures the number it could not record (logged, not errors).
	HistoryEvents   int `json:"history_events"`
	HistoryFailures int `json:"history_failures"`
	// Result is "success" (nothing failed, nothing skipped), "partial"
	// (nothing failed, but quarantined items were skipped) or "failure".
	Result string `json:"result"`
	// Converged says the run wrote nothing (a dry run: would write
	// nothing), met no error, skipped nothing and left nothing unexplained:
	// no unmatched deployment, no conflict, no quarantined item.
	Converged bool `json:"converged"`
	// Blockers say what keeps the run from being converged, one line each.
	Blockers []string `json:"blockers"`
	// Plan is what a dry run would have done; nil for other runs.
	Plan *Plan `json:"plan,omitempty"`

	// Aborted says why the run could not complete (listing, index, a breaker,
	// cancelled); nil for a run that did. Not kept in JSON.
	Aborted error `json:"-"`
}

// Progress counts the deployments a run has dealt with.
type Progress struct {
	// Done is the number of deployments dealt with so far.
	Done int `json:"done"`
	// Total is the number of deployments listed.
	Total int `json:"total"`
}

// Orphan is an index record without a deployment.
type Orphan struct {
	// InstanceID is the service instance.
	InstanceID string `json:"instance_id"`
	// Deployment is the deployment that is missing.
	Deployment string `json:"deployment"`
	// OrphanedAt is when it was flagged.
	OrphanedAt time.Time `json:"orphaned_at"`
}

// MaxDrifted bounds the drifted instances a summary names (Drift counts
// them all).
const MaxDrifted = 100

// Drifted is an instance whose manifest was found changed behind the
// broker's back, and what changed: operation.Summary of the manifest held
// against the one the Director runs ("changes", and "diff_groups",
// "diff_properties" (property names), "diff_releases", "diff_stemcells",
// "diff_guarded" when any), never a value; "diff_error" when the two could
// not be compared.
type Drifted struct {
	InstanceID string            `json:"instance_id"`
	Deployment string            `json:"deployment"`
	Changed    map[string]string `json:"changed"`
}

// AddDrifted names one more drifted instance, while fewer than MaxDrifted are.
func (s *Summary) AddDrifted(d Drifted) {
	if len(s.Drifted) < MaxDrifted {
		s.Drifted = append(s.Drifted, d)
	}
}

// LowConfidence is a match below reconciler.min_confidence.
type LowConfidence struct {
	// Deployment is the deployment's name.
	Deployment string `json:"deployment"`
	// Match is what the matcher found.
	Match Match `json:"match"`
}

// Unmatched is a deployment that no strategy tied to a service instance.
type Unmatched struct {
	// Deployment is the deployment's name.
	Deployment string `json:"deployment"`
	// Reason says what each strategy found missing.
	Reason string `json:"reason"`
	// Foreign says nothing about it is the broker's (match.Foreign):
	// another kind of deployment on a shared Director, listed apart; it
	// does not keep a run from converging.
	Foreign bool `json:"foreign,omitempty"`
}

// Conflict is a deployment that claimed an instance another deployment won:
// the one named {planID}-{instanceID}, else the one the index record
// names, else the one whose name sorts first.
type Conflict struct {
	// InstanceID is the instance both deployments claim.
	InstanceID string `json:"instance_id"`
	// Winner is the deployment whose records the instance keeps.
	Winner string `json:"winner"`
	// Loser is the deployment left out; nothing is written for it.
	Loser string `json:"loser"`
	// LoserDirector names the loser's Director when it is not the
	// winner's: a deployment of the owned instance's name on another
	// Director.
	LoserDirector string `json:"loser_director,omitempty"`
}

// Truncate cuts s to at most n bytes at a character's start, "..." that
// marks the cut included (textcut.Marked): what a report keeps of an error.
func Truncate(s string, n int) string { return textcut.Marked(s, n, "...") }

// HealthReport is what a run handed the health loop (the loop asks the
// Directors on its own, never within the run; its figures are the
// reconciler's status).
type HealthReport struct {
	// Handed is the number of deployments handed: Busy of them held by a
	// task or an operation when listed; Named those the event feeds
	// named (an instance or VM event, an alert), asked first.
	Handed int `json:"handed"`
	Busy   int `json:"busy"`
	Named  int `json:"named"`
	// Gone is the number of unhealthy instances dropped (record or
	// deployment gone).
	Gone int `json:"gone"`
	// Unhealthy is the number of unhealthy instances as the loop's
	// document said when the run ended.
	Unhealthy int `json:"unhealthy"`
}

// OutdatedReport is what a run found of the instances behind their plan.
type OutdatedReport struct {
	// Count is how many there are, ByPlan how many of each plan.
	Count  int            `json:"count"`
	ByPlan map[string]int `json:"by_plan"`
	// Instances are the first 100, the oldest version first.
	Instances []Outdated `json:"instances"`
	// Behind are the instances whose manifest asks for the latest of a
	// release or stemcell that their Director has in a newer version than
	// their deployment runs (absent: no instance known to the run asks for
	// a latest).
	Behind *BehindReport `json:"behind,omitempty"`
}

// Outdated is an instance whose record holds an older maintenance_info
// version than its plan declares, or none.
type Outdated struct {
	InstanceID string `json:"instance_id"`
	ServiceID  string `json:"service_id"`
	PlanID     string `json:"plan_id"`
	Deployment string `json:"deployment"`
	// Version is the version it was last deployed with ("" unknown: adopted
	// from a Director or migrated from a legacy Blacksmith); Want its plan's.
	Version string `json:"version"`
	Want    string `json:"want"`
	// Adopted says the reconciler adopted it (no broker deployed it).
	Adopted bool `json:"adopted,omitempty"`
}

// BehindReport is what a run found of the instances that ask for the latest
// of a release or stemcell: behind when the Director has a newer version
// uploaded than the deployment runs.
type BehindReport struct {
	// Count is how many are behind, ByPlan how many of each plan (0 for a
	// plan whose instances ask for a latest and are all current).
	Count  int            `json:"count"`
	ByPlan map[string]int `json:"by_plan"`
	// Asking is how many instances ask for a latest; Unknown how many the
	// run could not tell about: their manifest was not known to it without
	// a fetch (not fetched since the daemon started, or their deployment
	// changed or locked since) or could not be read, or their Director
	// could not be asked.
	Asking  int `json:"asking"`
	Unknown int `json:"unknown"`
	// Instances are the first 100 behind, by instance id.
	Instances []Behind `json:"instances"`
	// Errors are the Directors that could not say what they have uploaded
	// (GET /releases, GET /stemcells): their instances are not judged this
	// run. Not errors of the run.
	Errors []string `json:"errors"`
	// ByInstance is what each instance behind is behind on (every one; not
	// in JSON: the instance view's).
	ByInstance map[string][]Lag `json:"-"`
}

// Behind is an instance whose deployment runs an older version of a
// release or stemcell it asks for as the latest than its Director has.
type Behind struct {
	InstanceID string `json:"instance_id"`
	ServiceID  string `json:"service_id"`
	PlanID     string `json:"plan_id"`
	Deployment string `json:"deployment"`
	// Director names the Director when there are several.
	Director string `json:"director,omitempty"`
	// Lags are what it is behind on (at most 20).
	Lags []Lag `json:"lags"`
}

// Lag is one release or stemcell an instance asks for as the latest.
type Lag struct {
	// Type is "release" or "stemcell".
	Type string `json:"type"`
	// Name is the release's name, or the stemcell's operating system (or
	// name) as the manifest asks for it.
	Name string `json:"name"`
	// Running is the version the deployment runs, Newest the newest the
	// Director has uploaded (of the manifest's prefix, "621.latest").
	Running string `json:"running"`
	Newest  string `json:"newest"`
}

// IndexReport is a re-shard of the index a run made before it wrote: the
// records it would hold after the run were over vault.ReshardAbove a shard.
type IndexReport struct {
	// FromShards and ToShards are the shard counts before and after.
	FromShards int `json:"from_shards"`
	ToShards   int `json:"to_shards"`
	// Records is the number of records the index held at the run's start;
	// Expected the number it may hold after the run (Records and one for
	// each deployment the run deals with that has none).
	Records  int `json:"records"`
	Expected int `json:"expected_records"`
	// Writes counts the Vault writes of the re-shard.
	Writes int `json:"writes"`
	// DurationSeconds is how long it took.
	DurationSeconds float64 `json:"duration_seconds"`
	// Error says why it did not finish (the next run goes on).
	Error string `json:"error,omitempty"`
}
