// Package lease is the one way a daemon holds a lease in Vault: the
// reconciler's leader lease (its election and the commands that run once),
// the broker's per-instance leases and its shared limit lease. A Holder
// takes the lease (or renews it), waits for it while another daemon holds
// it, keeps renewing it every third of its TTL, tells when it was lost, and
// gives it up.
//
// Whether this daemon holds the lease is judged on its own monotonic clock:
// a lease counts from before the request that took or renewed it, less a
// sixth of its TTL, so a daemon paused past its lease (SIGSTOP, a long GC)
// knows it lost it the moment it runs again, whatever Vault says later.
package lease
