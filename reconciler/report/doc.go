// Package report holds the shapes a reconciler run is asked for and reports
// in: RunOptions and Scope, the Summary and what it lists (matches,
// conflicts, orphans, quarantined items, settled operations, remediations,
// each Director's listing and event feed, the platform cross-check), the
// dry run's Plan, and the one rule that judges a finished run (Outcome);
// beside them the unhealthy instances (UnhealthyInstance), the health
// loop's status (HealthLoopStatus) and the fleet upgrade's rules, scope,
// report, states and journal entries (Upgrade*).
//
// It owns data and pure rules only: it must not import any other package
// of the reconciler, do I/O or keep state, so that every stage and the
// reconciler's callers (cmd/blacksmith, operator, the bench, the soak, the
// specs) can share it: they name these types here, not through package
// reconciler.
package report
