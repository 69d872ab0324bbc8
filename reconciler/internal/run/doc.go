// Package run is one reconciliation run. Run reads as the run's phases,
// the list phases (run.go) that do runs, each reported and timed: platform
// read, event feeds, listing, quarantine read, choice and claims, index
// growth, reconcile, stuck operations, orphans, remediation, platform
// cross-check, bindings, quarantine, feed marks, health, outdated; then the
// run is summed up (the health phase only hands the health loop what the
// run saw: the loop asks the Directors beside the runs, health.go). One
// deployment goes through one
// function, reconcile (deployment.go), top to bottom: skip rules, fetch,
// match, claim, desired records, in step?, write, index change; workers
// call it, and the claimants held until every deployment is observed come
// back through it.
//
// The stages it calls live behind package walls: fleet (the Directors),
// match (the matching rules), records (an instance's records and the
// writers), memory (the ledger, quarantine, history), guard (breakers and
// the lease's fence), redeploy, health, platform, versions; the orphaner,
// the stuck-operation settler and the remediation are the small types of
// this package (orphans.go, stuck.go, remedy.go). What the phases hand each
// other is explicit: the listing (listing: the deployments listed and the
// index as read, never changed after it) and between (the platform read,
// the deployments listed and chosen, the claims). A phase that only a
// whole run makes (not a dry run, not a scoped one) says so in the list,
// and do skips it in others. The index growth (growth.go), the health
// handover (health.go) and the outdated look (outdated.go, behind.go) are
// phase types given their input (growthIn, handingIn, outdatedIn) and
// answering their section of the summary, each tested alone with tables;
// the platform read and cross-check and the bindings' check still take the
// run itself (platform.go, bindings.go): issue #40.
//
// It owns one run from start to Summary; it must not keep anything across
// runs but through its Parts (the cache of fetched answers, Vault) and must
// not be used but by package reconciler, which makes one run at a time.
package run
