// Package upgrade brings outdated instances to what their plan now
// deploys: the fleet upgrade. It selects the instances behind their plan's
// maintenance_info version (oldest first, within a scope, the quarantined
// ones left out), rolls them under the fleet rules (canaries first, at
// most MaxInFlight at once, no new start after MaxFailures failures, busy
// instances tried again up to AttemptLimit times), and upgrades each one top
// to bottom (one.go): render the plan's current templates with the
// recorded parameters and existing secrets, back up, deploy through a task,
// wait, record the version and manifest; a failed task is rolled back to
// the manifest of the backup and the instance quarantined.
//
// Its journal (a state document in Vault) holds the upgrades under way, so
// that one cut short (a stopped daemon) is finished by the next fleet
// upgrade, and the upgrade quarantine.
//
// It owns the upgrade path only: what a run reconciles, the broker's OSB
// operations and the redeploy mechanics (package redeploy) are not its own.
package upgrade
