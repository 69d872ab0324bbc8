// Package records is what one matched instance's records in Vault should
// be and how they get there: the desired records built from what the
// Director runs (Desired, whose fingerprint the index record keeps), the
// pure rules that compare them with what Vault holds (InStep, Vouches,
// Diff, the index changes), the reads of an instance's documents, and one
// Writer with two implementations: Vault (a backup first when something
// existing changes, the metadata and manifest, the index changes in
// batches) and the dry run's Plan.
//
// It owns an instance's metadata, manifest and index record; it must not
// reach the Director, match deployments or decide what is orphaned (it
// writes the orphaner's flags as it writes any index change).
package records
