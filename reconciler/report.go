package reconciler

import (
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// The shapes a run is asked for and reports in live in internal/report,
// which every stage shares; they are the reconciler's public types.
type (
	// RunOptions says what kind of run to make.
	RunOptions = report.RunOptions
	// Scope limits a run to part of the estate; the zero Scope is everything.
	Scope = report.Scope
	// Summary is the outcome of one run.
	Summary = report.Summary
	// Progress counts the deployments a run has dealt with.
	Progress = report.Progress
	// Orphan is an index record without a deployment.
	Orphan = report.Orphan
	// LowConfidence is a match below reconciler.min_confidence.
	LowConfidence = report.LowConfidence
	// Unmatched is a deployment that no strategy tied to a service instance.
	Unmatched = report.Unmatched
	// Conflict is a deployment that claimed an instance another deployment won.
	Conflict = report.Conflict
	// Drifted is an instance whose manifest was found changed, and what changed.
	Drifted = report.Drifted
	// Plan is what a dry run would have done.
	Plan = report.Plan
	// PlanItem is one instance a dry run would write records for.
	PlanItem = report.PlanItem
	// PlanOrphan is an index record whose orphaned flag would change.
	PlanOrphan = report.PlanOrphan
	// Match says which service instance a deployment is, and how sure that is.
	Match = report.Match
	// Strategy names the matcher strategy that tied a deployment to an instance.
	Strategy = report.Strategy
	// Quarantined is a deployment or instance set aside after failing in runs in a row.
	Quarantined = report.Quarantined
	// Settled is a broker operation found stuck, and what became of it.
	Settled = report.Settled
	// Remediation is what the run did (or would do) to an orphan.
	Remediation = report.Remediation
	// HealthReport is what a run asked the Directors of its instances' VMs.
	HealthReport = report.HealthReport
	// UnhealthyInstance is an instance whose VMs do not all run, since when.
	UnhealthyInstance = health.Entry
	// UnhealthyVM is a VM of an unhealthy instance, as the Director describes it.
	UnhealthyVM = health.VM
	// OutdatedReport is what a run found of the instances behind their plan.
	OutdatedReport = report.OutdatedReport
	// Outdated is an instance behind its plan's maintenance_info version.
	Outdated = report.Outdated
	// BehindReport is what a run found of the instances behind their Director.
	BehindReport = report.BehindReport
	// Behind is an instance that asks for a latest release or stemcell its
	// Director has in a newer version than it runs.
	Behind = report.Behind
	// Lag is one release or stemcell an instance is behind on.
	Lag = report.Lag
	// PlatformReport is the instances held against the platform's.
	PlatformReport = report.PlatformReport
	// PlatformInstance is one instance as the platform cross-check saw it.
	PlatformInstance = report.PlatformInstance
	// PlatformRecord is the platform's record of an instance.
	PlatformRecord = report.PlatformRecord
	// BindingsReport is what a run found of the bindings it checked.
	BindingsReport = report.BindingsReport
	// RestoredBinding is a binding whose credentials a run put back.
	RestoredBinding = report.RestoredBinding
	// LostBinding is a binding whose credentials could not be put back.
	LostBinding = report.LostBinding
	// FeedReport says how a run used the Director's event feed.
	FeedReport = report.FeedReport
	// DirectorReport is what a run saw of one Director.
	DirectorReport = report.DirectorReport
)

// Phases of a run, as Status reports them.
const (
	PhaseIdle     = report.PhaseIdle
	PhaseScanning = report.PhaseScanning
	PhaseUpdating = report.PhaseUpdating
	PhaseOrphans  = report.PhaseOrphans
)

// The matcher strategies, in the order they are tried.
const (
	StrategyName     = report.StrategyName
	StrategyMetadata = report.StrategyMetadata
	StrategyRelease  = report.StrategyRelease
	StrategyRule     = report.StrategyRule
)

// Feed modes, as the summary reports them.
const (
	FeedWatch    = report.FeedWatch
	FeedResync   = report.FeedResync
	FeedFallback = report.FeedFallback
)
