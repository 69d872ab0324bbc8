// Package run is one reconciliation run. Run reads as the run's phases,
// the list phases (run.go) that do runs, each reported and timed: platform
// read, event feeds, listing, quarantine read, choice and claims, index
// growth, reconcile, stuck operations, orphans, remediation, platform
// cross-check, bindings, quarantine, feed marks, health, outdated; then the
// run is summed up (the health phase only hands the health loop what the
// run saw: the loop asks the Directors beside the runs, health.go). One
// deployment goes through one function, reconcile (deployment.go), top to
// bottom: skip rules, fetch,
// match, claim, desired records, in step?, write, index change; workers
// call it, and the claimants held until every deployment is observed come
// back through it.
//
// The stages it calls live behind package walls: fleet (the Directors),
// match (the matching rules), records (an instance's records and the
// writers), memory (the ledger, quarantine, history), guard (breakers and
// the lease's fence), redeploy, health, platform, versions. What the phases hand each
// other is explicit: the listing (listing: the deployments listed and the
// index as read, never changed after it) and between (the platform read,
// the deployments listed and chosen, the claims). A phase that only a
// whole run makes (not a dry run, not a scoped one) says so in the list,
// and do skips it in others. Most phases are types given their input and
// answering their section of the summary (and the run's errors, which the
// list puts in the ledger): the choice (choice.go: choiceIn), the index
// growth (growth.go: growthIn), the health handover (health.go: handingIn), the platform cross-check and the
// retirement it carries on (crosscheck.go, retire.go: crossIn, retireIn),
// the bindings' check (bindings.go: bindingsIn), the outdated look
// (outdated.go, behind.go: outdatedIn), the quarantine (quarantining.go:
// quarantineIn), the feed marks (feedmarks.go: feedMarksIn), the
// stuck-operation settler, the orphaner and the remediation (stuck.go:
// stuckIn, orphans.go: orphanIn, remedy.go: its remediable orphans); the pure parts of each (what a phase decides
// from its input) are tested alone with tables, and what needs Vault (the
// quarantine's write) is left to the phase's entry. The event feeds, the
// listing and the reconcile are the run's own methods: they set what the
// run holds (the feeds' view, the listing, the writer); the choice's entry
// sets which cached copies the run trusts. Besides those methods, only the
// entries of the phases list take the run: each gives its phase the input
// it reads of the run and puts the answer in the ledger.
//
// It owns one run from start to Summary; it must not keep anything across
// runs but through its Parts (the cache of fetched answers, Vault) and must
// not be used but by package reconciler, which makes one run at a time.
package run
