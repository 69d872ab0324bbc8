// Package reconciler keeps the broker's records in Vault in step with what the
// BOSH Director really runs, so that service instances stay visible and
// manageable after restarts, lost data or changes made behind the broker's back.
//
// A run re-derives both sides and assumes nothing from the previous run; a run
// that ends part-way (a Director or Vault failure, a stop) is simply continued
// by the next one. The Manager (manager.go: New, Status; lifecycle.go: Start,
// Trigger, RunOnce) makes one run at a time; a run (run.go) lists both sides,
// wires its stages, feeds them the deployments and sums up what they did in
// its Summary. The stages share only a small runState (runstate.go: counters,
// errors, progress), the run's retry policy (retrier.go) and the claims
// (claims.go); each gets the Director, Store and configuration values it
// needs, never the Manager. One deployment goes through them in this order,
// and so do the files:
//
//   - the scanner (scanner.go) lists the Director's deployments with the
//     cheap listing (one request) and fetches a manifest and a VM list (both
//     at once) only for a deployment that is new or whose listing entry
//     (releases, lock) changed; answers are cached for Config.CacheTTL, after
//     which they are fetched again. That TTL is the operator's chosen
//     freshness: a change made to a deployment behind the broker's back that
//     leaves its listing entry as it was is seen once the cached answer
//     expires, or at once by a forced run, which clears the cache. The run
//     reads the index (run.go) beside the listing;
//   - the observer (observer.go) takes each listed deployment: a locked
//     deployment is skipped (a task is changing it), and so is an instance
//     whose broker operation is in progress; it fetches through the scanner
//     (a format=full VM listing is never asked for), has the matcher tie the
//     deployment to an instance and claims it, and builds the instance's
//     desired records (desired.go), whose fingerprint the index record keeps:
//     an instance in step costs no Vault request beyond the one Index read of
//     the run. A forced run trusts no fingerprint, so that documents lost
//     from Vault while the index kept the instance are written again;
//   - the matcher (matcher.go, strategies.go, claims.go) ties a deployment
//     to a service instance: by its name {planID}-{instanceID}, by
//     properties.blacksmith in its manifest (manifest.go), by a release
//     mapped to a service (Config.Releases), by a configured name rule
//     (Config.Rules); first match wins, each with a confidence; unmatched
//     deployments are reported with the reason each strategy gave. The
//     service and plan recorded are those the manifest's properties.blacksmith
//     names for the matched instance when it does: the broker renders them
//     there on every deploy, while a name keeps the plan the instance was
//     created with. The claims tie each instance to one deployment of the run,
//     whatever order the fetches finish in: the one named
//     {planID}-{instanceID}, else the one its index record names, else the
//     one whose name sorts first (decided once every deployment is
//     observed: such a claimant waits until then); the others are the run's
//     Conflicts, and nothing is written for them;
//   - the updater (updater.go, prefetch.go, brokerfields.go,
//     indexchange.go) brings one instance that is not in step to its target:
//     it reads what Vault holds (for an instance the index lacks, beside the
//     Director fetch), writes only what differs, after a backup when
//     something existing is about to change, records drift (a manifest
//     changed behind the broker's back) in the instance's history, restores
//     a lost index entry's broker fields from its newest backup or its
//     manifest, and makes the instance's index change. Fields it does not own
//     are kept. Config.MaxConcurrency observers fetch and compare and as many
//     updaters write, so that Director fetches do not wait for Vault;
//   - the index writer (indexwriter.go, flushpolicy.go) writes index changes
//     together, one Update at a time (at least Config.BatchSize of them, at
//     most one Update every 5 s while changes keep coming, back to back once
//     the run is about to end, the rest at its end), and counts what each
//     did; in a dry run it adds them to the plan (plan.go) instead;
//   - the orphaner (orphaner.go) flags index entries whose deployment is gone
//     as orphaned (never while the broker's operation on it is in progress or
//     a Director task for its deployment is queued or running, nor within
//     Config.OrphanGracePeriod after its creation); an entry whose deployment
//     comes back is un-flagged by its index change. Orphans are never deleted.
//
// Every failed step is retried Config.RetryAttempts times with exponential
// backoff from Config.RetryDelay (capped at 5 min, with jitter); one
// instance's failure never stops the others, and the next run tries again.
//
// The Manager runs one run at start and then every Config.Interval, serves
// forced and dry runs (a dry run computes the plan and writes nothing), never
// lets two runs overlap, stops within Config.StopTimeout, and exposes its
// Status (report.go) and Prometheus metrics (metrics.go,
// blacksmith_reconciler_*). The systems it uses are the interfaces of
// interfaces.go.
package reconciler
