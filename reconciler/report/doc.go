// Package report holds the shapes a reconciler run is asked for and reports
// in: RunOptions and Scope, the Summary and what it lists (matches,
// conflicts, orphans, quarantined items, settled operations, remediations,
// each Director's listing and event feed), the dry run's Plan, and the one
// rule that judges a finished run (Outcome).
//
// It owns data and pure rules only: it must not import any other package
// of the reconciler, do I/O or keep state, so that every stage and the
// public face (package reconciler, which re-exports these types) can share
// it.
package report
