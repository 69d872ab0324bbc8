package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/reconciler"
	"github.com/blacksmith-reconciler/blacksmith/reconciler/report"
	"github.com/blacksmith-reconciler/blacksmith/vault"
)

// measure makes one run and gathers its figures.
func measure(ctx context.Context, scenario string, n int, latency time.Duration, conc int,
	sims []*simProcess, store *vault.Store, m *reconciler.Manager) (result, error) {
	for _, s := range sims {
		if err := s.reset(ctx); err != nil {
			return result{}, err
		}
	}
	debug.FreeOSMemory()
	resetPeakRSS()
	before, cpu := store.Stats(), cpuTime()
	stopProfile := func() {}
	if runProfile != "" {
		var err error
		if stopProfile, err = startProfile(runProfile + "." + scenario); err != nil {
			return result{}, err
		}
	}
	start, live := time.Now(), watchLiveHeap()
	sum, err := m.RunOnce(ctx, report.RunOptions{Reason: "bench " + scenario})
	wall, peakLive := time.Since(start), live.Peak()
	stopProfile()
	if err != nil {
		return result{}, err
	}
	stats := simStats{Requests: map[string]int{}}
	for _, s := range sims {
		st, err := s.stats(ctx)
		if err != nil {
			return result{}, err
		}
		for k, v := range st.Requests {
			stats.Requests[k] += v
		}
		stats.Tasks += st.Tasks
	}
	after := store.Stats()
	byKind := map[string]uint64{}
	for k, v := range after.WritesByKind {
		if d := v - before.WritesByKind[k]; d > 0 {
			byKind[k] = d
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if memProfile != "" {
		if err := writeHeapProfile(memProfile); err != nil {
			return result{}, err
		}
	}
	r := result{
		VaultWritesByKind: byKind, HeapBytesPerDeployment: float64(ms.HeapAlloc) / float64(max(n, 1)), PeakLiveHeapBytes: peakLive,
		Resharded: sum.Index != nil && sum.Index.Error == "",
		Scenario:  fmt.Sprintf("%s-%d", scenario, n), Deployments: n, Directors: len(sims),
		LatencyMS: float64(latency) / float64(time.Millisecond), MaxConcurrency: conc,
		WallS: wall.Seconds(), DirectorRequests: stats.Requests, DirectorTasks: stats.Tasks,
		VaultReads: after.Reads - before.Reads, VaultChecks: after.Checks - before.Checks, VaultWrites: after.Writes - before.Writes,
		PeakRSSBytes: peakRSS(), Matched: sum.Matched, Created: sum.Created,
		ManifestsFetched: sum.ManifestsFetched, Errors: sum.ErrorCount, Converged: sum.Converged,
		CPUS: (cpuTime() - cpu).Seconds(), InstancesSynced: sum.InstancesSynced, Drift: sum.Drift,
		FeedMode: sum.Feed.Mode, FeedReason: sum.Feed.Reason, FeedPages: sum.Feed.Pages,
		platformRead: sum.Platform,
	}
	if h := sum.Health; h != nil {
		r.HealthHanded = h.Handed
	}
	if len(sims) > 1 {
		r.Scenario += fmt.Sprintf("-%ddirectors", len(sims))
		r.FirstDirectorFeedMode = sum.Directors[0].Feed.Mode
		r.FirstDirectorDeployments = sum.Directors[0].Deployments
	}
	if idx, err := store.Index(ctx); err == nil {
		r.IndexShards = idx.Shards
	}
	r.judge(scenario, latency, conc)
	return r, nil
}

// simsCPU is the CPU time the simulators used so far.
func simsCPU(sims []*simProcess) time.Duration {
	var t time.Duration
	for _, s := range sims {
		t += processCPU(s.cmd.Process.Pid)
	}
	return t
}

// memProfile is where -memprofile writes the heap profile ("" for none).
var memProfile string

// runProfile is where -runprofile writes each run's CPU profile, followed
// by "." and the scenario ("" for none).
var runProfile string

// writeHeapProfile writes the live heap's profile to path.
func writeHeapProfile(path string) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.WriteHeapProfile(out); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
