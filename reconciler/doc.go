// Package reconciler keeps the broker's records in Vault in step with what the
// BOSH Director really runs, so that service instances stay visible and
// manageable after restarts, lost data or changes made behind the broker's back.
//
// A run re-derives both sides and assumes nothing from the previous run; a run
// that ends part-way (a Director or Vault failure) is simply continued by the
// next one. A run has four stages:
//
//   - the scanner lists the Director's deployments with the cheap listing (one
//     request) and fetches a manifest and a VM list only for a deployment that
//     is new or whose listing entry (releases, stemcells, lock) changed; answers
//     are cached for Config.CacheTTL, after which they are fetched again (that
//     TTL is the operator's chosen freshness: a change made to a deployment
//     behind the broker's back that leaves its listing entry unchanged is seen
//     once the cached entry expires, or at once by a forced run);
//   - the matcher decides which service instance each deployment is (by name,
//     by manifest metadata, by release, by configured rule; first match wins);
//   - the updater computes the records each matched instance should have (the
//     index record, its metadata, its manifest), compares them with Vault by a
//     fingerprint kept in the index record, and writes only what differs, after
//     a backup when something existing is about to change;
//   - the synchronizer flags index entries whose deployment is gone as orphaned
//     (never while a provision or deprovision is in flight, nor within the
//     grace period after creation) and un-flags them when it comes back.
//
// The Manager runs one run at start and then every Config.Interval, serves
// forced and dry runs, never lets two runs overlap, and exposes its status and
// Prometheus metrics.
package reconciler
