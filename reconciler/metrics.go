package reconciler

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/internal/records"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"

	"github.com/prometheus/client_golang/prometheus"

	promreg "github.com/blacksmith-reconciler/blacksmith/internal/metrics"
)

// Label values: every series is initialised at 0 with these.
var (
	runResults    = []string{resultSuccess, resultPartial, resultFailure}
	instanceState = []string{stateMatched, stateOrphaned, stateFailed, stateQuarantined, stateUnknown}
	writeKinds    = []string{kindIndex, kindMetadata, kindManifest, kindBackup}
)

const (
	resultSuccess    = report.ResultSuccess
	resultFailure    = report.ResultFailure
	resultPartial    = report.ResultPartial
	stateQuarantined = "quarantined"
	stateUnknown     = "unknown"
	stateMatched     = "matched"
	stateOrphaned    = "orphaned"
	stateFailed      = "failed"
	kindIndex        = records.KindIndex
	kindMetadata     = records.KindMetadata
	kindManifest     = records.KindManifest
	kindBackup       = records.KindBackup
)

// Snapshot is the run counters in the shape operators know from Blacksmith's
// reconciler status. Dry runs are not counted.
type Snapshot struct {
	// TotalRuns counts finished runs.
	TotalRuns int64 `json:"total_runs"`
	// SuccessfulRuns counts runs that ended without an error.
	SuccessfulRuns int64 `json:"successful_runs"`
	// FailedRuns counts runs that ended with at least one error.
	FailedRuns int64 `json:"failed_runs"`
	// TotalDurationSeconds adds up the durations of all runs.
	TotalDurationSeconds float64 `json:"total_duration_seconds"`
	// AverageDurationSeconds is TotalDurationSeconds / TotalRuns.
	AverageDurationSeconds float64 `json:"average_duration_seconds"`
	// LastRunDurationSeconds is the duration of the last run.
	LastRunDurationSeconds float64 `json:"last_run_duration_seconds"`
	// TotalDeploymentsScanned adds up the deployments each run saw.
	TotalDeploymentsScanned int64 `json:"total_deployments_scanned"`
	// TotalInstancesFound adds up the instances each run matched.
	TotalInstancesFound int64 `json:"total_instances_found"`
	// TotalInstancesSynced adds up the instances each run wrote records for.
	TotalInstancesSynced int64 `json:"total_instances_synced"`
	// TotalErrors adds up the errors of all runs.
	TotalErrors int64 `json:"total_errors"`
}

// metrics holds the reconciler's Prometheus collectors and its Snapshot.
type metrics struct {
	runs, writes, instances  *prometheus.CounterVec
	state                    *prometheus.GaugeVec
	directorUp, directorDeps *prometheus.GaugeVec // several Directors
	outdated                 *prometheus.GaugeVec // by plan
	behind                   *prometheus.GaugeVec // by plan
	duration                 prometheus.Histogram
	deployments, unmatched   prometheus.Gauge
	conflicts                prometheus.Gauge
	lastSuccess, converged   prometheus.Gauge
	noEvents                 prometheus.Gauge
	running                  prometheus.Gauge
	unhealthy                prometheus.Gauge
	bindingsLost             prometheus.Gauge
	drift, errs, scanned     prometheus.Counter
	fetches                  prometheus.Counter
	upgrades                 *prometheus.CounterVec // by result
	upgradesInFlight         prometheus.Gauge

	mu   sync.Mutex
	snap Snapshot
}

// newMetrics creates the collectors and registers them on r (nil: not registered).
func newMetrics(r prometheus.Registerer) (*metrics, error) {
	reg := &registrar{reg: r}
	m := &metrics{
		runs: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_reconciler_runs_total", Help: "Reconciler runs (dry runs excluded), by result.",
		}, []string{"result"})),
		duration: register(reg, prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "blacksmith_reconciler_run_duration_seconds", Help: "Duration of reconciler runs.",
			Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
		})),
		deployments: newGauge(reg, "blacksmith_reconciler_deployments", "Deployments the Director listed in the last run."),
		unmatched:   newGauge(reg, "blacksmith_reconciler_unmatched_deployments", "Deployments the last run could not tie to a service instance."),
		conflicts: newGauge(reg, "blacksmith_reconciler_conflicts",
			"Deployments the last run found claiming an instance another deployment keeps (an owned instance's, on any Director): never written."),
		state: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blacksmith_reconciler_instances", Help: "Service instances by state after the last run.",
		}, []string{"state"})),
		outdated: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blacksmith_instances_outdated",
			Help: "Instances that do not run what their plan now deploys (an older maintenance_info version, or none), by plan, as of the last complete run.",
		}, []string{"plan"})),
		behind: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blacksmith_instances_behind",
			Help: "Instances whose manifest asks for the latest of a release or stemcell that their Director has in a newer version than their deployment runs, by plan, as of the last complete run.",
		}, []string{"plan"})),
		directorUp: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blacksmith_reconciler_director_up", Help: "1 when the last run could list the Director's deployments, else 0.",
		}, []string{"director"})),
		directorDeps: register(reg, prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "blacksmith_reconciler_director_deployments", Help: "Deployments the Director listed in the last run that could list it.",
		}, []string{"director"})),
		instances: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_reconciler_instances_total", Help: "Service instances found (matched) and synced (written), added up over runs.",
		}, []string{"outcome"})),
		writes: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_reconciler_vault_writes_total", Help: "Writes to Vault by the reconciler, by record kind.",
		}, []string{"kind"})),
		drift:       newCounter(reg, "blacksmith_reconciler_drift_total", "Manifests found changed behind the broker's back."),
		errs:        newCounter(reg, "blacksmith_reconciler_errors_total", "Errors met by reconciler runs."),
		scanned:     newCounter(reg, "blacksmith_reconciler_deployments_scanned_total", "Deployments listed, added up over runs."),
		fetches:     newCounter(reg, "blacksmith_reconciler_manifest_fetches_total", "Manifests fetched from the Director (cache misses)."),
		lastSuccess: newGauge(reg, "blacksmith_reconciler_last_success_timestamp_seconds", "Unix time of the end of the last run without errors."),
		converged:   newGauge(reg, "blacksmith_reconciler_converged", "1 when the last run wrote nothing and met no error, else 0."),
		noEvents: newGauge(reg, "blacksmith_reconciler_director_no_events",
			"1 when the last run found a Director recording no events (director.events.record_events false): watched through its tasks alone, no Health Monitor alert arrives."),
		running: newGauge(reg, "blacksmith_reconciler_running", "1 while a run is in progress."),
		upgrades: register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "blacksmith_upgrades_total",
			Help: "Instances a fleet upgrade ended with (dry runs excluded), by result: upgraded, unchanged, current, skipped, failed, rolled_back, rollback_failed, errand_failed, interrupted.",
		}, []string{"result"})),
		upgradesInFlight: newGauge(reg, "blacksmith_upgrades_in_flight", "Instance upgrades under way: being prepared (read, rendered, backed up) or their Director task running."),
		bindingsLost: newGauge(reg, "blacksmith_bindings_lost",
			"Bindings whose credentials are gone from Vault and could not be put back, as of the last complete run that checked bindings."),
		unhealthy: newGauge(reg, "blacksmith_instances_unhealthy",
			"Instances whose VMs do not all run (a process failing, an agent not answering), as the Directors said when last asked."),
	}
	if reg.err != nil {
		return nil, fmt.Errorf("registering reconciler metrics: %w", reg.err)
	}
	m.init()
	return m, nil
}

// init creates every labelled series at 0.
func (m *metrics) init() {
	for _, v := range runResults {
		m.runs.WithLabelValues(v)
	}
	for _, v := range instanceState {
		m.state.WithLabelValues(v)
	}
	for _, v := range writeKinds {
		m.writes.WithLabelValues(v)
	}
	m.instances.WithLabelValues("found")
	m.instances.WithLabelValues("synced")
	for _, v := range upgradeResults {
		m.upgrades.WithLabelValues(v)
	}
}

// observe records a finished run (not a dry run). The gauges that describe
// what the Director runs keep the last complete run's values: a run that
// could not list the deployments or read the index saw nothing of them.
func (m *metrics) observe(s report.Summary, end time.Time) {
	result := s.Result
	m.runs.WithLabelValues(result).Inc()
	m.duration.Observe(s.Duration.Seconds())
	m.instances.WithLabelValues("found").Add(float64(s.Matched))
	m.instances.WithLabelValues("synced").Add(float64(s.InstancesSynced))
	m.scanned.Add(float64(s.DeploymentsSeen))
	m.errs.Add(float64(s.ErrorCount))
	m.fetches.Add(float64(s.ManifestsFetched))
	if s.Scope == nil { // a scoped run says nothing of the rest of the estate
		m.converged.Set(boolGauge(s.Converged))
		m.noEvents.Set(boolGauge(s.Feed.NoEvents))
		for _, d := range s.Directors {
			m.directorUp.WithLabelValues(d.Name).Set(boolGauge(d.Listed))
			if d.Listed {
				m.directorDeps.WithLabelValues(d.Name).Set(float64(d.Deployments))
			}
		}
		if s.Aborted == nil {
			m.setState(s)
		}
	}
	if result != resultFailure { // a partial run did all it tried
		m.lastSuccess.Set(float64(end.UnixNano()) / 1e9)
	}
	m.record(s, result != resultFailure)
}

// setState sets the gauges that describe the deployments and instances.
func (m *metrics) setState(s report.Summary) {
	m.deployments.Set(float64(s.DeploymentsSeen))
	m.unmatched.Set(float64(s.Unmatched))
	m.conflicts.Set(float64(len(s.Conflicts)))
	m.state.WithLabelValues(stateMatched).Set(float64(s.Matched))
	m.state.WithLabelValues(stateOrphaned).Set(float64(s.OrphansTotal))
	m.state.WithLabelValues(stateFailed).Set(float64(s.Failed))
	m.state.WithLabelValues(stateQuarantined).Set(float64(s.QuarantinedTotal))
	m.state.WithLabelValues(stateUnknown).Set(float64(s.Unknown))
}

// record adds a run to the Snapshot.
func (m *metrics) record(s report.Summary, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := &m.snap
	n.TotalRuns++
	if ok {
		n.SuccessfulRuns++
	} else {
		n.FailedRuns++
	}
	n.LastRunDurationSeconds = s.Duration.Seconds()
	n.TotalDurationSeconds += n.LastRunDurationSeconds
	n.AverageDurationSeconds = n.TotalDurationSeconds / float64(n.TotalRuns)
	n.TotalDeploymentsScanned += int64(s.DeploymentsSeen)
	n.TotalInstancesFound += int64(s.Matched)
	n.TotalInstancesSynced += int64(s.InstancesSynced)
	n.TotalErrors += int64(s.ErrorCount)
}

// snapshot returns a copy of the Snapshot.
func (m *metrics) snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.snap
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func newGauge(reg *registrar, name, help string) prometheus.Gauge {
	return register(reg, prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help}))
}

func newCounter(reg *registrar, name, help string) prometheus.Counter {
	return register(reg, prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help}))
}

// registrar registers collectors and keeps the first error.
type registrar struct {
	reg prometheus.Registerer
	err error
}

// register registers c (when there is a registry) and returns it, or the
// collector the registry already holds under the same description; the
// first error is kept.
func register[C prometheus.Collector](r *registrar, c C) C {
	c, err := promreg.Register(r.reg, c)
	r.err = cmp.Or(r.err, err)
	return c
}

// leaderGauge registers blacksmith_ha_leader: 1 while this daemon runs the
// reconciler (always without HA).
func (m *metrics) leaderGauge(r prometheus.Registerer, leads func() bool) error {
	reg := &registrar{reg: r}
	register(reg, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "blacksmith_ha_leader", Help: "1 while this daemon holds the reconciler lease and runs the reconciler (always 1 without HA).",
	}, func() float64 { return boolGauge(leads()) }))
	return reg.err
}

// Wrote counts n writes to Vault of a kind (records.Counters).
func (m *metrics) Wrote(kind string, n int) { m.writes.WithLabelValues(kind).Add(float64(n)) }

// Drift counts a manifest found changed behind the broker's back (records.Counters).
func (m *metrics) Drift() { m.drift.Inc() }

// upgradeResults are the states a fleet upgrade counts an instance's end in.
var upgradeResults = []string{report.UpgradeUpgraded, report.UpgradeUnchanged, report.UpgradeCurrent, report.UpgradeSkipped, report.UpgradeFailed,
	report.UpgradeRolledBack, report.UpgradeRollbackFailed, report.UpgradeErrandFailed, report.UpgradeInterrupted}

// upgradeState counts an instance's change of state in a fleet upgrade
// (a dry run's are not counted).
func (m *metrics) upgradeState(prev, next string, dryRun bool) {
	if dryRun {
		return
	}
	if prev == report.UpgradeInFlight {
		m.upgradesInFlight.Dec()
	}
	if next == report.UpgradeInFlight {
		m.upgradesInFlight.Inc()
	}
	if slices.Contains(upgradeResults, next) {
		m.upgrades.WithLabelValues(next).Inc()
	}
}
