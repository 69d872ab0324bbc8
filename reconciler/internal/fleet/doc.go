// Package fleet is the BOSH Directors as a reconciler run sees them: always
// a fleet, one Director being a fleet of one. It lists every Director at
// once (each with the run's retries and a circuit breaker of its own), says
// which Director listed a deployment and sends that deployment's requests
// there, reads and keeps each Director's event feed from its own mark, tells
// the records whose Director could not be listed ("unknown": never
// orphaned), reports each Director, and caches the fetched answers
// (manifests, VM lists) across runs.
//
// A Director whose listing fails, or whose breaker opens, is out of the run
// and the others go on; once none is left the run stops. What differs with
// a single Director is decided once, in New: its index records name no
// Director, its breaker is "director" and its feed mark "events", as they
// were before there could be several.
//
// It owns the Directors' side of a run; it must not write an instance's
// records, match deployments or decide what is orphaned.
package fleet
