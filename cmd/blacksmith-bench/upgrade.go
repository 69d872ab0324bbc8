package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/bosh"
	"github.com/blacksmith-reconciler/blacksmith/bosh/sim"
	"github.com/blacksmith-reconciler/blacksmith/broker"
	"github.com/blacksmith-reconciler/blacksmith/config"
	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/ports"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// The upgrade scenarios: a fleet upgrade (reconciler.Manager.Upgrade) of
// every instance of a fresh setup, each one outdated (its plan publishes a
// maintenance_info version it does not record, with a manifest template
// whose rendering differs from what runs: one deploy task each), under
// these rules, on a simulator whose tasks take upgradeTask and that runs
// upgradeInFlight of them at once (a Director's workers; its default 3
// would bound the fleet below max_in_flight).
const (
	upgradeMax      = 1000 // 10,000 would take 200 s at these rules: bounded to this many
	upgradeTask     = 200 * time.Millisecond
	upgradeInFlight = 10
	upgradeCanaries = 1
	upgradeVersion  = "2.0.0"
	// upgradeFaultEvery: in upgrade-faults, the next task of every 33rd
	// instance by id (the 33rd, 66th, ...: never the canary) ends in error (3%).
	upgradeFaultEvery = 33
	maxProblems       = 10 // problems listed in a BENCH line
	// upgradeRatio bounds a fleet upgrade's wall against (instances +
	// failed tasks) x task duration / max_in_flight.
	upgradeRatio = 1.2
)

// upgradeOrder are the upgrade scenarios, each on a setup of its own.
var upgradeOrder = []string{"upgrade", "upgrade-faults"}

// upgradeFigures are the upgrade scenarios' own figures in a BENCH line.
type upgradeFigures struct {
	Instances      int     `json:"instances"`
	TaskDurationMS float64 `json:"task_duration_ms"`
	MaxInFlight    int     `json:"max_in_flight"`
	Canaries       int     `json:"canaries"`
	MaxFailures    int     `json:"max_failures"`
	UpgradePollMS  float64 `json:"upgrade_poll_ms"`
	// Injected are the instances whose upgrade task was made to fail.
	Injected                   int     `json:"injected_failures"`
	DirectorRequestsTotal      int     `json:"director_requests_total"`
	DirectorRequestsPerUpgrade float64 `json:"director_requests_per_upgrade"`
	VaultReadsPerUpgrade       float64 `json:"vault_reads_per_upgrade"`
	VaultWritesPerUpgrade      float64 `json:"vault_writes_per_upgrade"`
	// MaxOverlap is the most tasks the Director ran at once (the task log);
	// CanaryFirst says the first task (the canary's) ended before the second began.
	MaxOverlap  int  `json:"max_overlap"`
	CanaryFirst bool `json:"canary_first"`
	// Counts are the report's instances by state.
	Counts         map[string]int `json:"counts"`
	Stopped        string         `json:"stopped,omitempty"`
	RolledBack     int            `json:"rolled_back"`
	RollbackFailed int            `json:"rollback_failed"`
	// HalfState counts the instances left with their operation in progress
	// (InProgress of them) or running a manifest neither the one before
	// the upgrade nor the plan's new rendering.
	HalfState  int `json:"half_state"`
	InProgress int `json:"in_progress"`
	// Problems are what the checks after the run found wrong (the first
	// maxProblems of ProblemCount): an instance not in the state it should
	// be, a rollback without its task, Vault and the Director disagreeing.
	ProblemCount int      `json:"problem_count"`
	Problems     []string `json:"problems,omitempty"`
	// Where an upgraded instance's time goes, on average: from its start
	// to its task's start (PreTaskMS), its task, and from the task's end to
	// the upgrade's (PostTaskMS, the poll included).
	PreTaskMS  float64 `json:"pre_task_ms"`
	TaskMS     float64 `json:"task_ms"`
	PostTaskMS float64 `json:"post_task_ms"`
}

// upgrade runs upgrade scenario sc over n instances of a setup of its own:
// a simulator seeded with n deployments, a fresh KV mount, a cold
// reconciler run (not measured) that records them, their adoption
// confirmed (an upgrade leaves adopted instances alone); then the plans'
// new version published (a Manager with the new catalog and the broker as
// its renderer) and the fleet upgrade measured.
func (b *bench) upgrade(ctx context.Context, sc string, n int) (result, error) {
	s, err := startSim(ctx, b.simBin, n, b.f.latency, "-workers", strconv.Itoa(upgradeInFlight))
	if err != nil {
		return result{}, err
	}
	defer s.stop()
	mount := fmt.Sprintf("bench-%s-%d", sc, n)
	if err := b.vault.EnableKV(mount, 2); err != nil {
		return result{}, err
	}
	store, err := vault.New(ctx, vault.Options{Address: b.vault.Addr, Token: b.vault.Token, Mount: mount, Logger: b.log})
	if err != nil {
		return result{}, err
	}
	defer store.Close()
	before, err := b.upgradeSetup(ctx, s, store)
	if err != nil {
		return result{}, fmt.Errorf("setting up: %w", err)
	}
	m, brk, err := b.upgradeManager(s, store)
	if err != nil {
		return result{}, err
	}

	// What runs before and what the new version renders, per instance (the simulator's latency off: not measured).
	if err := s.setConfig(ctx, 0, upgradeTask); err != nil {
		return result{}, err
	}
	ids := slices.Sorted(maps.Keys(before))
	old, rendered := map[string]string{}, map[string]string{}
	faulty := map[string]bool{}
	for i, id := range ids {
		if old[id], err = s.manifest(ctx, before[id].Deployment(id)); err != nil {
			return result{}, err
		}
		if rendered[id], err = brk.RenderManifest(ctx, id, before[id]); err != nil {
			return result{}, err
		}
		if rendered[id] == old[id] {
			return result{}, fmt.Errorf("the new version of %s renders what runs: nothing to deploy", id)
		}
		if sc == "upgrade-faults" && i%upgradeFaultEvery == upgradeFaultEvery-1 {
			faulty[id] = true
		}
	}
	if err := s.reset(ctx); err != nil { // also forgets task ends injected before
		return result{}, err
	}
	for id := range faulty {
		if err := s.failNextTask(ctx, before[id].Deployment(id)); err != nil {
			return result{}, err
		}
	}
	if err := s.setConfig(ctx, b.f.latency, upgradeTask); err != nil {
		return result{}, err
	}

	canaries, inFlight, noLimit := upgradeCanaries, upgradeInFlight, 0
	debug.FreeOSMemory()
	resetPeakRSS()
	vaultCPU, simCPU := processCPU(b.vault.Pid()), simsCPU([]*simProcess{s})
	st, cpu := store.Stats(), cpuTime()
	start := time.Now()
	rep, err := m.Upgrades().Run(ctx, reconciler.UpgradeRequest{Canaries: &canaries, MaxInFlight: &inFlight, MaxFailures: &noLimit,
		Trigger: "command"})
	wall := time.Since(start)
	if err != nil {
		return result{}, err
	}
	if rep.Error != "" {
		return result{}, errors.New(rep.Error)
	}
	r := result{Scenario: fmt.Sprintf("%s-%d", sc, n), Deployments: n, Directors: 1,
		LatencyMS: float64(b.f.latency) / float64(time.Millisecond), MaxConcurrency: config.Default().Reconciler.MaxConcurrency,
		WallS: wall.Seconds(), PeakRSSBytes: peakRSS(), CPUS: (cpuTime() - cpu).Seconds()}
	r.VaultCPUS = (processCPU(b.vault.Pid()) - vaultCPU).Seconds()
	r.SimCPUS = (simsCPU([]*simProcess{s}) - simCPU).Seconds()
	after := store.Stats()
	r.VaultReads, r.VaultWrites = after.Reads-st.Reads, after.Writes-st.Writes
	stats, err := s.stats(ctx)
	if err != nil {
		return result{}, err
	}
	r.DirectorRequests, r.DirectorTasks = stats.Requests, stats.Tasks
	log, err := s.taskLog(ctx)
	if err != nil {
		return result{}, err
	}
	u := &upgradeFigures{Instances: n, TaskDurationMS: float64(upgradeTask) / float64(time.Millisecond), MaxInFlight: inFlight,
		Canaries: canaries, MaxFailures: noLimit, UpgradePollMS: float64(b.f.upgradePoll) / float64(time.Millisecond),
		Injected: len(faulty), Counts: rep.Counts, Stopped: rep.Stopped, MaxOverlap: sim.MaxOverlap(log)}
	r.upgradeFigures = u
	for _, c := range stats.Requests {
		u.DirectorRequestsTotal += c
	}
	u.DirectorRequestsPerUpgrade = float64(u.DirectorRequestsTotal) / float64(n)
	u.VaultReadsPerUpgrade, u.VaultWritesPerUpgrade = float64(r.VaultReads)/float64(n), float64(r.VaultWrites)/float64(n)
	u.RolledBack, u.RollbackFailed = rep.Counts[report.UpgradeRolledBack], rep.Counts[report.UpgradeRollbackFailed]
	u.timing(rep, log)

	// The checks, against what the Director and Vault hold now (latency off again: not measured).
	if err := s.setConfig(ctx, 0, upgradeTask); err != nil {
		return r, err
	}
	if err := u.check(ctx, s, store, rep, log, before, old, rendered, faulty); err != nil {
		return r, err
	}
	r.judge(sc, b.f.latency, r.MaxConcurrency)
	return r, nil
}

// upgradeSetup records the simulator's deployments in Vault with a cold
// run and confirms their adoption (one index update); it returns the records.
func (b *bench) upgradeSetup(ctx context.Context, s *simProcess, store *vault.Store) (map[string]*vault.Record, error) {
	setup, _, err := b.manager([]*simProcess{s}, store, time.Now)
	if err != nil {
		return nil, err
	}
	sum, err := setup.RunOnce(ctx, report.RunOptions{Reason: "bench upgrade setup"})
	if err != nil {
		return nil, err
	}
	if sum.ErrorCount > 0 {
		return nil, fmt.Errorf("the cold run had %d errors", sum.ErrorCount)
	}
	idx, err := store.Index(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	changes := map[string]vault.Change{}
	for id := range idx.Records {
		changes[id] = func(cur *vault.Record) (*vault.Record, error) {
			next := cur.Clone()
			next.Adopted, next.AdoptionConfirmedAt = false, now
			return next, nil
		}
	}
	if _, err := store.Update(ctx, changes); err != nil {
		return nil, fmt.Errorf("confirming the adoptions: %w", err)
	}
	if idx, err = store.Index(ctx); err != nil {
		return nil, err
	}
	return idx.Records, nil
}

// upgradeManager is a reconciler with the default configuration whose
// catalog publishes the plans' new version, the broker rendering (and
// holding) the instances, as the daemon wires them; the Director deploys.
func (b *bench) upgradeManager(s *simProcess, store *vault.Store) (*reconciler.Manager, *broker.Broker, error) {
	client, err := bosh.New(bosh.Options{Name: "director-0", Address: s.url, Username: "admin", Password: "admin", Logger: b.log})
	if err != nil {
		return nil, nil, err
	}
	cat, err := upgradeCatalog()
	if err != nil {
		return nil, nil, err
	}
	brk, err := broker.New(broker.Options{Catalog: cat, Directors: []broker.NamedDirector{{Name: client.Name(), Director: client, Reader: client}},
		Store: store, Username: "bench", Password: "bench", Logger: b.log})
	if err != nil {
		return nil, nil, err
	}
	m, err := reconciler.New(reconciler.Options{
		Config:    config.Default().Reconciler,
		Directors: []ports.NamedDirector{{Name: client.Name(), Director: client, Tasks: client, Deployer: client}},
		Store:     store, Catalog: cat, Renderer: brk, Logger: b.log, UpgradePoll: b.f.upgradePoll,
		Hold: func(ctx context.Context, id string) (context.Context, func(), error) {
			ctx, release, err := brk.HoldInstance(ctx, id)
			if errors.Is(err, broker.ErrInstanceBusy) {
				err = fmt.Errorf("%w: %w", reconciler.ErrInstanceBusy, err)
			}
			return ctx, release, err
		},
	})
	return m, brk, err
}

// upgradeTemplate is a plan's new manifest: the seeded deployments'
// (bosh/sim's seedManifest) on a newer stemcell.
const upgradeTemplate = `name: {{ .DeploymentName }}
releases:
- name: %[1]s
  version: "%[2]s"
stemcells:
- alias: default
  os: ubuntu-jammy
  version: "1.507"
instance_groups:
- name: %[1]s
  instances: %[3]d
  azs: [z1, z2, z3]
  jobs:
  - name: %[1]s
    release: %[1]s
    properties:
      %[1]s:
        password: ((%[1]s_password))
  vm_type: small
  persistent_disk_type: default
  stemcell: default
  networks:
  - name: services
- name: smoke-tests
  lifecycle: errand
  instances: 1
  azs: [z1]
  jobs:
  - name: smoke-tests
    release: %[1]s
  vm_type: small
  stemcell: default
  networks:
  - name: services
update:
  canaries: 1
  max_in_flight: 1
  canary_watch_time: 30000-240000
  update_watch_time: 30000-240000
`
