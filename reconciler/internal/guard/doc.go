// Package guard stands between a reconciler run and the systems it writes
// to or reads from: a circuit breaker per system (each Director, Vault) that
// fails a run's requests fast once a system failed Config.BreakerThreshold
// requests in a row, and, with HA, the fence that stops every write once
// this daemon lost the reconciler lease.
//
// Store wraps every Vault method a run uses, each written out (no embedded
// interface passes a method through), so that a write method added to a
// stage's interface does not compile until it is wrapped here. It owns no
// rule of the reconciliation and must not import the reconciler's stages.
package guard
