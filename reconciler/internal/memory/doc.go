// Package memory is what a reconciler run remembers: within the run, its
// ledger (the Summary's counters, errors, unmatched deployments, orphan
// flags, what was fetched) and its progress; across runs, in Vault, the
// quarantine, each instance's history and the run log. One backoff Policy
// spaces both: the retries of a failed step and the later rounds of a run
// (seconds), and the quarantine's waits between runs (minutes to a day).
//
// It owns these records and how they are kept; it must not reach the
// Director, match deployments or write an instance's records (metadata,
// manifest, index), and imports nothing of the reconciler but report.
package memory
