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
// place (options.go: withDefaults), the report types
// (report.go re-exports internal/report; status.go: Status and what it
// publishes), the metrics (metrics.go), and the operator's reads and actions:
// the instance view (instances.go), the run log (manager.go: Runs),
// Rollback (rollback.go) and RebuildIndex (rebuild.go), and the fleet
// upgrades (upgrades.go: Upgrades, one at a time, in the caller's
// goroutine, or handed to their part: POST /b/upgrades, or after each run
// in the background mode), the health loop beside the runs (health.go:
// Health, internal/healthloop)
// and the watch between runs (watch.go: every reconciler.watch_interval a
// look at the Directors' feeds that asks for a run when they changed). It
// sees a run as one call, run.Run, that returns a Summary.
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
//   - report: the shapes a run is asked for and reports in;
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
