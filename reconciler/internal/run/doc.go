// Package run is one reconciliation run. Run reads as the run's phases:
// read every Director's event feed, list every Director and read the index,
// choose the deployments (ignored, out of scope), reconcile each deployment,
// settle the broker's stuck operations, flag orphans, remediate, settle the
// quarantine, keep the feeds' marks, sum up. One deployment goes through one
// function, reconcile (deployment.go), top to bottom: skip rules, fetch,
// match, claim, desired records, in step?, write, index change; workers
// call it, and the claimants held until every deployment is observed come
// back through it.
//
// The stages it calls live behind package walls: fleet (the Directors),
// match (the matching rules), records (an instance's records and the
// writers), memory (the ledger, quarantine, history), guard (breakers and
// the lease's fence) and redeploy; the orphaner, the stuck-operation
// settler and the remediation are the small types of this package
// (orphans.go, stuck.go, remedy.go). Each is given what it needs, never the
// run.
//
// It owns one run from start to Summary; it must not keep anything across
// runs but through its Parts (the cache of fetched answers, Vault) and must
// not be used but by package reconciler, which makes one run at a time.
package run
