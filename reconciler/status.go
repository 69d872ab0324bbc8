package reconciler

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/notify"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/health"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/memory"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/run"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// published is what the Manager shows of its runs: the run in progress,
// the last run, and what the last complete run over the whole estate found.
// It is safe for concurrent use.
type published struct {
	notifier ports.Notifier // nil: nobody
	director string         // the first Director's name, in a failed run's notification
	metrics  *metrics
	now      func() time.Time
	health   *health.Tracker
	sweep    time.Duration
	platform *platformMetrics // nil: no platform

	mu        sync.Mutex
	runID     string
	progress  *memory.Progress // of the run in progress, nil when none
	last      *report.Summary
	lastFull  *report.Summary // the last run over the whole estate (converged, blockers)
	orphans   []report.Orphan
	unmatched []report.Unmatched
	conflicts []report.Conflict
	quar      []report.Quarantined
}

func newPublished(n ports.Notifier, director string, met *metrics, now func() time.Time, h *health.Tracker, sweep time.Duration) *published {
	return &published{notifier: n, director: director, metrics: met, now: now, health: h, sweep: sweep,
		orphans: []report.Orphan{}, unmatched: []report.Unmatched{}, conflicts: []report.Conflict{}, quar: []report.Quarantined{}}
}

// snapshot is the Status of what is published (Enabled and the leader's
// fields are the Manager's).
func (p *published) snapshot() Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{
		Phase:       report.PhaseIdle,
		Metrics:     p.metrics.snapshot(),
		Orphans:     slices.Clone(p.orphans),
		Unmatched:   slices.Clone(p.unmatched),
		Conflicts:   slices.Clone(p.conflicts),
		Quarantined: slices.Clone(p.quar),
		Blockers:    []string{},
	}
	if p.last != nil {
		last := *p.last
		st.LastRun = &last
	}
	if p.lastFull != nil {
		st.Converged, st.Blockers = p.lastFull.Converged, slices.Clone(p.lastFull.Blockers)
		st.Outdated = p.lastFull.Outdated
		st.Platform = p.lastFull.Platform
		st.Bindings = p.lastFull.Bindings
	}
	if p.progress != nil {
		st.Running, st.RunID, st.Phase, st.Progress = true, p.runID, p.progress.Phase(), p.progress.Now()
	}
	st.Health = p.healthStatus()
	return st
}

// behindOf is what the last complete run found instance id behind on; nil
// when nothing (or no complete run yet).
func (p *published) behindOf(id string) []report.Lag {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lastFull == nil || p.lastFull.Outdated == nil || p.lastFull.Outdated.Behind == nil {
		return nil
	}
	return slices.Clone(p.lastFull.Outdated.Behind.ByInstance[id])
}

// maxUnhealthyListed bounds the unhealthy instances Status lists.
const maxUnhealthyListed = 100

// healthStatus is what the last run left of the VMs' health.
func (p *published) healthStatus() HealthStatus {
	entries := p.health.Current().Sorted()
	hs := HealthStatus{Unhealthy: len(entries), Instances: entries[:min(len(entries), maxUnhealthyListed)],
		SweepSeconds: p.sweep.Seconds()}
	if hs.Instances == nil {
		hs.Instances = []report.UnhealthyInstance{}
	}
	return hs
}

// setCurrent publishes the run in progress (progress nil: none).
func (p *published) setCurrent(id string, progress *memory.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.runID, p.progress = id, progress
	p.metrics.running.Set(boolGauge(progress != nil))
}

// finished publishes a run's outcome (not a dry run's): metrics and status;
// a run that failed after one that did not is notified.
func (p *published) finished(res run.Result) {
	s := res.Summary
	p.metrics.observe(s, p.now())
	if s.Bindings != nil {
		p.metrics.bindingsLost.Set(float64(s.Bindings.LostTotal))
	}
	if o := s.Outdated; o != nil {
		p.metrics.outdated.Reset()
		for plan, n := range o.ByPlan {
			p.metrics.outdated.WithLabelValues(plan).Set(float64(n))
		}
	}
	p.platform.observe(s.Platform)
	if s.Scope == nil && s.Aborted == nil { // a complete run looked: none asking for a latest leaves no series
		p.metrics.behind.Reset()
		if o := s.Outdated; o != nil && o.Behind != nil {
			for plan, n := range o.Behind.ByPlan {
				p.metrics.behind.WithLabelValues(plan).Set(float64(n))
			}
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notifyFailure(s)
	p.last = &s
	if s.Scope == nil {
		p.lastFull = &s
	}
	if s.Aborted == nil && s.Scope == nil {
		p.orphans, p.unmatched, p.conflicts = res.Orphans, res.Unmatched, slices.Clone(s.Conflicts)
		if res.Quarantine != nil {
			p.quar = res.Quarantine
		}
	}
}

// notifyFailure tells the notifier of a run that failed after one that did
// not (a transition: a Director down for a day is announced once).
func (p *published) notifyFailure(s report.Summary) {
	if p.notifier == nil || s.Result != report.ResultFailure || (p.last != nil && p.last.Result == report.ResultFailure) {
		return
	}
	reason := "the run failed"
	if len(s.Errors) > 0 {
		reason = s.Errors[0]
	}
	p.notifier.Notify(notify.Event{Type: notify.RunFailed, Director: p.director, Reason: reason, RunID: s.RunID,
		Time: p.now().UTC()})
}

// knownConflicts are the conflicts the last complete run reported: a
// conflict is recorded in the instance's history once, when it appears.
func (p *published) knownConflicts() map[string]bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	known := make(map[string]bool, len(p.conflicts))
	for _, c := range p.conflicts {
		known[memory.ConflictKey(c)] = true
	}
	return known
}

// follow takes the newest run of the run log as the last run when it is
// newer than the one known: so that a restarted daemon's status shows the
// last run (its conflicts are not recorded again), and a daemon that does
// not lead follows the leader's runs.
func (p *published) follow(ctx context.Context, l runLog) {
	if s, ok := l.newest(ctx); ok {
		p.adopt(s)
	}
}

// followHealth takes the health document the leader's runs keep, so that
// a daemon that does not lead shows the unhealthy instances too (its gauge
// included; the alert counts the leader's only).
func (p *published) followHealth(ctx context.Context, state memory.StateStore) {
	var doc health.Doc
	if ok, err := state.ReadState(ctx, health.DocName, &doc); err != nil || !ok {
		return
	}
	p.health.Set(doc)
	p.metrics.unhealthy.Set(float64(len(doc.Unhealthy)))
}

// adopt takes a run of the run log as the last run when it is newer than
// the one known (and, over the whole estate, its conflicts).
func (p *published) adopt(s report.Summary) {
	s.Duration = memory.Duration(s)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last != nil && !s.StartedAt.After(p.last.StartedAt) {
		return
	}
	p.last = &s
	if s.Scope == nil {
		p.lastFull, p.conflicts = &s, s.Conflicts
		if p.conflicts == nil {
			p.conflicts = []report.Conflict{}
		}
	}
}

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
	Progress report.Progress `json:"progress"`
	// LastRun is the summary of the last run that was not a dry run.
	LastRun *report.Summary `json:"last_run,omitempty"`
	// Metrics are the run counters.
	Metrics Snapshot `json:"metrics"`
	// Orphans are the orphaned records the last run saw.
	Orphans []report.Orphan `json:"orphans"`
	// Unmatched are the deployments the last run could not match.
	Unmatched []report.Unmatched `json:"unmatched"`
	// Conflicts are the conflicting claims the last run saw.
	Conflicts []report.Conflict `json:"conflicts"`
	// Quarantined are the items set aside after the last complete run.
	Quarantined []report.Quarantined `json:"quarantined"`
	// Converged is the last run's (see Summary.Converged).
	Converged bool `json:"converged"`
	// Blockers are the last run's (see Summary.Blockers).
	Blockers []string `json:"blockers"`
	// Health is the instances whose VMs do not all run, as the Directors
	// said when last asked.
	Health HealthStatus `json:"health"`
	// Outdated are the instances that do not run what their plan now
	// deploys, as the last complete run found them, and (behind) those
	// that run older versions than their Director has of a release or
	// stemcell they ask for as the latest (absent: not looked for, the
	// catalog declaring no maintenance_info and no manifest asking for a
	// latest).
	Outdated *report.OutdatedReport `json:"outdated,omitempty"`
	// Platform is the instances held against the platform's (the Cloud
	// Controller's) by the last complete run: its state (known, unknown),
	// the orphan deployments and the platform-only instances (absent: no
	// platform configured).
	Platform *report.PlatformReport `json:"platform,omitempty"`
	// Bindings is what the last complete run found of the bindings it
	// checked, and the bindings lost so far (absent: no broker).
	Bindings *report.BindingsReport `json:"bindings,omitempty"`
}

// HealthStatus is what the Directors said of the instances' VMs.
type HealthStatus struct {
	// Unhealthy is the number of unhealthy instances.
	Unhealthy int `json:"unhealthy"`
	// Instances are the unhealthy instances, longest unhealthy first (the
	// first 100).
	Instances []report.UnhealthyInstance `json:"instances"`
	// SweepSeconds is reconciler.health_sweep: every deployment's VM
	// states are asked once in that time by the health loop (0: no sweep;
	// only the deployments instance, VM and alert events name are asked).
	SweepSeconds float64 `json:"sweep_seconds"`
	// Loop is what the health loop is doing (the leader's; a follower's
	// is not leading).
	Loop report.HealthLoopStatus `json:"loop"`
}
