package main

import (
	"encoding/json"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
)

// Targets.
const (
	coldRatio = 1.2
	warmWall  = 2.0 // seconds
	steadyRSS = 150 << 20
)

// result is one BENCH line.
type result struct {
	Scenario    string `json:"scenario"`
	Deployments int    `json:"deployments"`
	// Directors is the number of Directors (simulators) the deployments are spread over.
	Directors        int            `json:"directors"`
	LatencyMS        float64        `json:"latency_ms"`
	MaxConcurrency   int            `json:"max_concurrency"`
	WallS            float64        `json:"wall_s"`
	DirectorRequests map[string]int `json:"director_requests"`
	DirectorTasks    int            `json:"director_tasks"`
	VaultReads       uint64         `json:"vault_reads"`
	// VaultChecks is how many of VaultReads were metadata reads telling an
	// index shard the last run read unchanged (vault.Indexes.IndexFrom).
	VaultChecks uint64 `json:"vault_metadata_checks"`
	VaultWrites uint64 `json:"vault_writes"`
	// VaultWritesByKind splits VaultWrites by the kind of document
	// (vault.WriteKinds: index, instance, secret, backup, history, runlog,
	// state, other); kinds without a write are left out.
	VaultWritesByKind map[string]uint64 `json:"vault_writes_by_kind,omitempty"`
	// VaultCPUPerWriteMS is the Vault server's CPU time per write of the run.
	VaultCPUPerWriteMS float64 `json:"vault_cpu_per_write_ms,omitempty"`
	// HeapBytesPerDeployment is the bench process's (the reconciler's) live
	// heap after the run and a garbage collection, divided by the
	// deployments: what it keeps between runs, per deployment.
	HeapBytesPerDeployment float64 `json:"heap_bytes_per_deployment"`
	// PeakLiveHeapBytes is the largest live heap (what the last garbage
	// collection kept) seen during the run: its working set. The peak RSS
	// is about twice it (GOGC 100) unless GOMEMLIMIT holds it lower.
	PeakLiveHeapBytes uint64 `json:"peak_live_heap_bytes"`
	// IndexShards is the index's shard count after the run; Resharded says
	// the run re-sharded it.
	IndexShards int  `json:"index_shards,omitempty"`
	Resharded   bool `json:"resharded,omitempty"`
	// PeakRSSBytes is the bench process's peak RSS during the run. Before
	// each run the process returns its free memory to the system (as the
	// daemon's runtime does between runs, minutes apart), so that a run's
	// peak is its own, not what the run before it left mapped.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// CPUS is the CPU time the bench process (the reconciler) used in the
	// run; VaultCPUS and SimCPUS the Vault server's and the simulator's.
	CPUS      float64 `json:"cpu_s"`
	VaultCPUS float64 `json:"vault_cpu_s"`
	SimCPUS   float64 `json:"sim_cpu_s"`
	// LowerBoundS is N x L / max_concurrency for a cold run, L (the one
	// listing request) for a warm run.
	LowerBoundS      float64 `json:"lower_bound_s"`
	Ratio            float64 `json:"ratio"`
	Matched          int     `json:"matched"`
	Created          int     `json:"created"`
	ManifestsFetched int     `json:"manifests_fetched"`
	Errors           int     `json:"errors"`
	Converged        bool    `json:"converged"`
	// Changed is the number of deployments changed out of band before the run.
	Changed         int    `json:"changed"`
	InstancesSynced int    `json:"instances_synced"`
	Drift           int    `json:"drift"`
	FeedMode        string `json:"feed_mode"`
	FeedReason      string `json:"feed_reason,omitempty"`
	FeedPages       int    `json:"feed_pages"`
	// With several Directors: the first one's feed mode and deployments
	// (the one out-of-band changes happen on).
	FirstDirectorFeedMode    string `json:"first_director_feed_mode,omitempty"`
	FirstDirectorDeployments int    `json:"first_director_deployments,omitempty"`
	// HealthHanded is the deployments the run handed the health loop (which
	// asks the Directors beside the runs: the footprint scenario measures it).
	HealthHanded int    `json:"health_handed"`
	Target       string `json:"target"`
	TargetMet    bool   `json:"target_met"`
	// CountsMet is the target without its bounds of time and memory (what
	// was asked, written and found): what a spec may check on a busy
	// machine, where a wall time says little.
	CountsMet  bool `json:"counts_met"`
	GoMaxProcs int  `json:"gomaxprocs"`
	// The upgrade scenarios' and the platform scenario's own figures (nil,
	// and absent, for the others).
	*upgradeFigures
	*platformFigures
	*footprintFigures
	// platformRead is the run's platform report (nil without the cross-check).
	platformRead *report.PlatformReport
}

// judge fills in the lower bound, the ratio and whether the target was met.
func (r *result) judge(scenario string, latency time.Duration, conc int) {
	r.GoMaxProcs = runtime.GOMAXPROCS(0)
	k := max(r.Directors, 1) // each Director is listed and its feed read once
	total := 0
	for _, c := range r.DirectorRequests {
		total += c
	}
	fast := true // the target's bounds of time and memory (see CountsMet)
	// The one Vault write of a run that changes nothing is its run-log entry.
	switch scenario {
	case "cold":
		r.LowerBoundS = float64(r.Deployments) * latency.Seconds() / float64(conc)
		r.Target = "ratio <= 1.2, every deployment matched, no error"
		r.TargetMet = r.Errors == 0 && r.Matched == r.Deployments
	case "warm":
		r.LowerBoundS = latency.Seconds()
		r.Target = "the listing, one event page and the task list (of each Director), 0 tasks, 1 Vault write (the run log), under 2 s, converged"
		r.TargetMet = r.Errors == 0 && total == 3*k && r.DirectorRequests["GET /events"] == k && r.DirectorRequests["GET /tasks"] == k &&
			r.DirectorTasks == 0 &&
			r.VaultWrites == 1 && r.Converged
		fast = r.WallS < warmWall
	case "steady":
		r.LowerBoundS = latency.Seconds()
		r.Target = "scheduled run, cache expired, nothing changed, every default on: <= 3 Director requests (of each Director), 0 tasks " +
			"(the health loop asks beside the run), 1 Vault write (the run log), under 2 s, under 150 MB, converged"
		r.TargetMet = r.Errors == 0 && total <= 3*k && r.DirectorTasks == 0 && r.HealthHanded == r.Deployments &&
			r.VaultWrites <= 1 && r.ManifestsFetched == 0 && r.Converged
		fast = r.WallS < warmWall && r.PeakRSSBytes < steadyRSS
	case "steady-1pct":
		r.LowerBoundS = float64(2*r.Changed) * latency.Seconds() / float64(conc)
		r.Target = "1 listing + the event pages + the task list + 2 requests per changed deployment, each changed instance synced (drift), " +
			"nothing else, no task, no error"
		r.TargetMet = r.Errors == 0 && r.DirectorRequests["GET /deployments"] == k &&
			r.DirectorRequests["GET /deployments/:name"] == r.Changed &&
			r.DirectorRequests["GET /deployments/:name/vms"] == r.Changed && r.DirectorTasks == 0 &&
			total == 2*k+r.FeedPages+2*r.Changed && r.InstancesSynced == r.Changed && r.Drift == r.Changed
	case "gap":
		r.LowerBoundS = float64(r.Deployments) * latency.Seconds() / float64(conc)
		r.Target = "the feed no longer reaches the mark: a resync, every deployment fetched, every change found, no error"
		r.TargetMet = r.Errors == 0 && r.FeedMode == "resync" && r.ManifestsFetched == r.Deployments && r.Drift == r.Changed
		if k > 1 { // the gap is in the first Director's feed: it resyncs, the others watch
			r.LowerBoundS = float64(r.FirstDirectorDeployments) * latency.Seconds() / float64(conc)
			r.Target = "the first Director's feed no longer reaches its mark: it resyncs (every deployment of it fetched), the others watch, every change found, no error"
			r.TargetMet = r.Errors == 0 && r.FirstDirectorFeedMode == "resync" && r.ManifestsFetched == r.FirstDirectorDeployments &&
				r.Drift == r.Changed
		}
	case "reshard":
		r.Target = "the run after a cold one re-shards the index (vault.ShardsFor), nothing else written but the run log, no error"
		r.TargetMet = r.Errors == 0 && r.Resharded && r.VaultWritesByKind["index"]+r.VaultWritesByKind["runlog"] == r.VaultWrites
	case "upgrade", "upgrade-faults":
		r.judgeUpgrade(scenario)
	case "platform":
		r.judgePlatform()
	}
	r.CountsMet, r.TargetMet = r.TargetMet, r.TargetMet && fast
	if r.LowerBoundS > 0 {
		r.Ratio = r.WallS / r.LowerBoundS
	}
	switch scenario {
	case "cold":
		r.TargetMet = r.TargetMet && r.Ratio <= coldRatio
	case "upgrade", "upgrade-faults":
		r.TargetMet = r.TargetMet && r.Ratio <= upgradeRatio
	}
}

// judgeUpgrade sets an upgrade scenario's lower bound and target: each
// instance one task (a failed one two: its rollback's), max_in_flight at
// once.
func (r *result) judgeUpgrade(scenario string) {
	u := r.upgradeFigures
	if u == nil || u.MaxInFlight <= 0 {
		r.Target, r.TargetMet = "no upgrade figures", false
		return
	}
	r.LowerBoundS = float64(u.Instances+u.Injected) * u.TaskDurationMS / 1000 / float64(u.MaxInFlight)
	ok := u.MaxOverlap <= u.MaxInFlight && u.CanaryFirst && u.HalfState == 0 && u.InProgress == 0 && u.ProblemCount == 0 &&
		u.Stopped == ""
	switch scenario {
	case "upgrade":
		r.Target = "ratio <= 1.2 against N x task / max_in_flight; every instance upgraded by one task; " +
			"at most max_in_flight tasks at once, the canary's first; none in progress or half-upgraded"
		r.TargetMet = ok && u.Counts[report.UpgradeUpgraded] == u.Instances && r.DirectorTasks == u.Instances
	case "upgrade-faults":
		r.Target = "ratio <= 1.2 against (N + failed) x task / max_in_flight; each failed upgrade rolled back " +
			"(a second task ended done, the manifest of before running), the others upgraded; " +
			"at most max_in_flight tasks at once, the canary's first; half_state 0"
		r.TargetMet = ok && u.RolledBack == u.Injected && u.RollbackFailed == 0 &&
			u.Counts[report.UpgradeUpgraded] == u.Instances-u.Injected && r.DirectorTasks == u.Instances+u.Injected
	}
}

func (r result) json() string {
	b, _ := json.Marshal(r)
	return string(b)
}

// liveHeapWatch samples the live heap until stopped, keeping the largest.
type liveHeapWatch struct {
	stop chan struct{}
	done chan uint64
}

// watchLiveHeap starts sampling runtime/metrics' /gc/heap/live:bytes;
// with -memprofile, it writes a heap profile each time the peak grows by a
// tenth (the last one is the run's peak, in MEMPROFILE.peak).
func watchLiveHeap() *liveHeapWatch {
	w := &liveHeapWatch{stop: make(chan struct{}), done: make(chan uint64, 1)}
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		var peak uint64
		for {
			metrics.Read(sample)
			if v := sample[0].Value; v.Kind() == metrics.KindUint64 && v.Uint64() > peak {
				if memProfile != "" && v.Uint64() > peak+peak/10 {
					// what the heap holds at its peak (-memprofile's name with
					// .peak), after two collections: a heap profile is of the
					// heap as the last collections left it, else one that may
					// be long past at a peak between collections
					runtime.GC()
					runtime.GC()
					_ = writeHeapProfile(memProfile + ".peak")
				}
				peak = v.Uint64()
			}
			select {
			case <-w.stop:
				w.done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

// Peak stops the sampling and returns the largest live heap seen.
func (w *liveHeapWatch) Peak() uint64 {
	close(w.stop)
	return <-w.done
}

// resetPeakRSS resets the kernel's peak RSS mark of this process (Linux).
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS is the peak RSS of this process since the last reset, in bytes (Linux).
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// cpuTime is the CPU time this process has used so far.
// processCPU is the CPU time (user and system) process pid has used, from
// /proc/{pid}/stat; 0 when it cannot be read.
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil || pid <= 0 {
		return 0
	}
	s := string(b)
	// The command name (field 2) may hold spaces: fields count from after its ')'.
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(utime+stime) * time.Second / ticks
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
