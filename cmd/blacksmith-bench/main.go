// Command blacksmith-bench measures the reconciler against the Director
// simulator (a child process, so that the measured RSS is the reconciler's)
// and a real Vault dev server: for each number of deployments, in order, a
// cold run (empty Vault, empty cache), a warm run (nothing changed), a
// steady run (a scheduled interval later: every cached copy expired,
// nothing changed), platform (steady runs without and with the platform
// cross-check against the Cloud Controller simulator, every instance in
// step: what the cross-check adds; platform.go), a steady-1pct run (1%
// changed out of band since) and a gap run (more changed than the Director
// keeps events of); then, on a setup of their own of min(n, 1000)
// deployments, a fleet upgrade of every instance (upgrade) and one where 3%
// of the upgrade tasks fail and are rolled back (upgrade-faults;
// upgrade.go). Each is printed as one line "BENCH {json}" whose target_met
// says whether the run met its target (see result.judge). The reconciler
// runs with the default configuration; the VM health sweep is not the
// run's (the health loop asks beside it: health_handed is what the run
// handed it); footprint, last, runs the reconciler as serve does (its
// watch between runs, the health loop beside it) for -footprint-window
// (100 s) and measures
// what it costs each Director: the health loop's tasks per hour and at
// once, the queue wait of the broker's deploys made meanwhile, the time an
// out-of-band deploy and an unresponsive agent take to reach Vault and the
// health state (footprint.go). It exits 1 when a run fails, and with
// -strict also when a target is missed (wall-clock targets depend on what
// else the machine is running).
//
//	go run ./cmd/blacksmith-bench -n 1000,10000 -latency 10ms -scenarios cold,warm,steady,platform,steady-1pct,gap,upgrade,upgrade-faults
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/blacksmith-reconciler/blacksmith/config"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// flags are the bench's command-line settings.
type flags struct {
	sizes       []int
	latency     time.Duration
	scenarios   map[string]bool
	concurrency int
	directors   int // the deployments of a size spread over this many simulators
	verbose     bool
	strict      bool
	cpuProfile  string
	memoryLimit int64         // bytes, 0 for none
	upgradePoll time.Duration // how often a fleet upgrade asks about its tasks
	// footprintWindow is how long the footprint scenario watches the daemon.
	footprintWindow time.Duration
	// footprintSpeed is how many times faster than the wall its reconciler's clock runs.
	footprintSpeed int
	healthSweep    time.Duration // reconciler.health_sweep (0: off)
}

func run(args []string, stdout, stderr io.Writer) int {
	f, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b, err := newBench(ctx, f, log)
	if err != nil {
		fmt.Fprintln(stderr, "blacksmith-bench:", err)
		return 1
	}
	defer b.close()
	if f.memoryLimit > 0 {
		// The reconciler's own limit, as the release's memory_limit gives
		// the daemon (GOMEMLIMIT would also reach Vault and the simulators).
		debug.SetMemoryLimit(f.memoryLimit)
	}
	if f.cpuProfile != "" {
		stopProfile, err := startProfile(f.cpuProfile)
		if err != nil {
			fmt.Fprintln(stderr, "blacksmith-bench:", err)
			return 1
		}
		defer stopProfile()
	}
	return b.all(ctx, stdout, stderr)
}

// all runs every size and prints a BENCH line per scenario; its exit code
// is 1 when a run fails, or (with -strict) when a target is missed.
func (b *bench) all(ctx context.Context, stdout, stderr io.Writer) int {
	ok := true
	for _, n := range b.f.sizes {
		results, err := b.size(ctx, n)
		for _, r := range results {
			fmt.Fprintln(stdout, "BENCH "+r.json())
			ok = ok && r.TargetMet
		}
		if err != nil {
			fmt.Fprintln(stderr, "blacksmith-bench:", err)
			return 1
		}
	}
	if !ok {
		fmt.Fprintln(stderr, "blacksmith-bench: a target was missed (see target_met)")
		if b.f.strict {
			return 1
		}
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (flags, error) {
	var f flags
	var sizes, scenarios string
	fs := flag.NewFlagSet("blacksmith-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&sizes, "n", "1000,10000", "comma-separated numbers of deployments")
	fs.DurationVar(&f.latency, "latency", 10*time.Millisecond, "Director latency added to every request")
	fs.StringVar(&scenarios, "scenarios", strings.Join(scenarioOrder, ","),
		"comma-separated scenarios to print: "+strings.Join(scenarioOrder, ", ")+" (each of the reconciler's runs on what the one before left, so those before it run too; "+
			"each upgrade scenario on a setup of its own of min(n, 1000) deployments, once per bench)")
	fs.IntVar(&f.concurrency, "concurrency", 0, "reconciler.max_concurrency (0: the default)")
	fs.IntVar(&f.directors, "directors", 1, "spread each size's deployments over this many Directors (simulators), reconciled as several Directors")
	fs.DurationVar(&f.footprintWindow, "footprint-window", 100*time.Second,
		"how long the footprint scenario runs the daemon (the watch's 1m and an unresponsive agent's 15 s need about 90 s to show)")
	fs.IntVar(&f.footprintSpeed, "footprint-speed", 6, "how many times faster than the wall the footprint scenario's reconciler clock runs (1 to 60)")
	fs.DurationVar(&f.upgradePoll, "upgrade-poll", 50*time.Millisecond, "how often the upgrade scenarios' fleet upgrade asks about a task (the daemon's default is 1s, for tasks of minutes)")
	fs.DurationVar(&f.healthSweep, "health-sweep", config.Default().Reconciler.HealthSweep,
		"reconciler.health_sweep (0: off, so that a run's wall is its own; the steady targets count the sweep's share apart either way)")
	fs.BoolVar(&f.verbose, "v", false, "log the reconciler's runs")
	fs.BoolVar(&f.strict, "strict", false, "exit 1 when a target is missed")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the runs to this file")
	fs.Func("memory-limit", "the reconciler's soft memory limit, as the daemon's GOMEMLIMIT (e.g. 450MiB; none by default)", func(v string) error {
		n, err := parseMemoryLimit(v)
		f.memoryLimit = n
		return err
	})
	fs.StringVar(&runProfile, "runprofile", "", "write a CPU profile of each run (the reconciler's runs only) to this file .{scenario}; not with -cpuprofile")
	fs.StringVar(&memProfile, "memprofile", "", "write a heap profile to this file after each measured run (the last one stays), and one at the live heap's peak to this file .peak (after a collection: slower runs)")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	for _, s := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "-n: %q is not a positive number\n", s)
			return f, flag.ErrHelp
		}
		f.sizes = append(f.sizes, n)
	}
	if f.upgradePoll <= 0 {
		fmt.Fprintf(stderr, "-upgrade-poll: %s is not positive\n", f.upgradePoll)
		return f, flag.ErrHelp
	}
	if f.footprintSpeed < 1 || f.footprintSpeed > 60 || f.footprintWindow <= 0 {
		fmt.Fprintf(stderr, "-footprint-speed %d (1 to 60) or -footprint-window %s (positive) is out of bounds\n", f.footprintSpeed, f.footprintWindow)
		return f, flag.ErrHelp
	}
	if runProfile != "" && f.cpuProfile != "" {
		fmt.Fprintln(stderr, "-runprofile and -cpuprofile: one CPU profile at a time")
		return f, flag.ErrHelp
	}
	if f.healthSweep < 0 {
		fmt.Fprintf(stderr, "-health-sweep: %s is negative\n", f.healthSweep)
		return f, flag.ErrHelp
	}
	if f.directors < 1 || f.directors > 8 {
		fmt.Fprintf(stderr, "-directors: %d is not between 1 and 8\n", f.directors)
		return f, flag.ErrHelp
	}
	f.scenarios = map[string]bool{}
	for _, s := range strings.Split(scenarios, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(scenarioOrder, s) {
			fmt.Fprintf(stderr, "-scenarios: %q is none of %s\n", s, strings.Join(scenarioOrder, ", "))
			return f, flag.ErrHelp
		}
		f.scenarios[s] = true
	}
	return f, nil
}

// startProfile writes a CPU profile to path until the returned function is called.
func startProfile(path string) (func(), error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); out.Close() }, nil
}

// needs says whether scenario sc runs: it is printed, or one printed after
// it needs it first (a reconciler scenario; each upgrade scenario has a
// setup of its own, and platform leaves what it found: none needs them;
// footprint needs the records of cold alone).
func (f flags) needs(sc string) bool {
	at := slices.Index(reconcileOrder, sc)
	if at < 0 || sc == "platform" {
		return f.scenarios[sc]
	}
	for _, later := range reconcileOrder[at:] {
		if f.scenarios[later] && (later != "footprint" || sc == "cold" || sc == later) {
			return true
		}
	}
	return false
}

// parseMemoryLimit reads a size as GOMEMLIMIT does: a number and B, KiB,
// MiB, GiB or TiB (or no unit, bytes).
func parseMemoryLimit(v string) (int64, error) {
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	num, shift := v, uint(0)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(v, u.suffix); ok {
			num, shift = rest, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q is not a size such as 450MiB", v)
	}
	return n << shift, nil
}
