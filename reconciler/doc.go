// Package reconciler keeps the broker's records in Vault in step with what
// the BOSH Directors really run, so that service instances stay visible and
// manageable after restarts, lost data or changes made behind the broker's
// back.
//
// This package is the reconciler's public face: the Manager (manager.go:
// New, Status; loops.go: Loops, the parts the daemon's errgroup serves,
// each holding what it uses, not the Manager; lifecycle.go: the runs' loop,
// Trigger, RunOnce and the run lock; queue.go: the runs asked for while
// another is in progress; leader.go: the HA election, a part of its own,
// and leader-only actions), its Options with every default filled in one
// place (options.go: withDefaults), its Status and what it publishes
// (status.go), the metrics (metrics.go), and the operator's reads and
// actions: the instance view (instances.go), the run log (manager.go:
// Runs), Rollback (rollback.go) and RebuildIndex (rebuild.go), and the
// fleet upgrades (upgrades.go: Upgrades, one at a time, in the caller's
// goroutine, or handed to their part: POST /b/upgrades, or after each run
// in the background mode), the health loop beside the runs (health.go:
// Health, a HealthLoop over internal/healthloop) and the watch between
// runs (watch.go: every reconciler.watch_interval a look at the Directors'
// feeds that asks for a run when they changed). It sees a run as one call,
// run.Run, that returns a Summary.
//
// The types its callers name live in two public packages beside it, which
// the stages below share and which import no other package of the
// reconciler: reconciler/report, the shapes a run (and a fleet upgrade) is
// asked for and reports in (RunOptions, Scope, Summary, UpgradeReport, the
// health loop's status...), and reconciler/ports, the systems the
// reconciler uses (Director, Tasks, Deployer, NamedDirector, Operations,
// Renderer, Notifier, PlatformReader). This package re-exports no internal
// type: only its stages' sentinel errors are named here (options.go).
//
// A run re-derives both sides and assumes nothing from the previous run; a
// run that ends part-way (a Director or Vault failure, a stop) is simply
// continued by the next one. The run and its stages live behind package
// walls under internal/, each saying in its own doc what it owns and what it
// must not touch:
//
//   - run: one run, its phases in order (run.go: do), and one deployment's
//     path in one function (deployment.go: reconcile): skip rules, fetch,
//     match, claim, desired records, in step?, write, index change; the
//     orphaner, the stuck-operation settler and the remediation;
//   - fleet: the Directors, always as a fleet (one Director is a fleet of
//     one): listing, owners, a breaker and an event feed mark each,
//     "unknown" records, reports, the cache of fetched answers;
//   - match: the matching rules and the claims, as pure code;
//   - records: an instance's desired records, the pure diff against what
//     Vault holds, and the writers (Vault, or the dry run's plan);
//   - memory: the run's ledger and progress, the quarantine, the history,
//     the run log, and the one backoff policy at two time scales;
//   - guard: the circuit breakers and the HA fence, wrapping every Vault
//     method a run uses, each written out;
//   - redeploy: the one path a manifest is deployed by (rollback,
//     remediation);
//   - upgrade: the fleet upgrade (selection, fleet rules, one instance's
//     upgrade and rollback, the journal of upgrades under way);
//   - health and healthloop: the VMs' health (pure) and the loop that asks
//     the Directors for it beside the runs, from what each run hands it,
//     within a budget per Director.
//
// The Manager makes one run at start and then every Config.Interval, serves
// forced, scoped and dry runs (a dry run computes the plan and writes
// nothing), never lets two runs overlap, stops within Config.StopTimeout,
// and exposes its Status and Prometheus metrics (blacksmith_reconciler_*).
// It must not reach into a run: what a run found comes back in its
// run.Result.
package reconciler
