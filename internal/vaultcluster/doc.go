// Package vaultcluster runs a real Vault cluster as operators run one: three
// (or more) nodes of the Vault build ci/vault makes, each its own process
// with integrated Raft storage in a temporary directory, on loopback ports,
// joined through retry_join, initialized and unsealed over the HTTP API,
// behind a small load balancer that health-checks /v1/sys/health and sends
// every request to the active node.
//
// It is for specs and for the soak (cmd/blacksmith-soak): the faults a
// production cluster sees are methods of Cluster (Kill, Stop and Cont,
// Seal, Restart, RestartAll), and Active names the node that leads. The
// nodes' own addresses serve the same cluster without the balancer. Every
// wait is bounded by a context; Close kills the nodes and removes their
// directories, and the nodes die with the process that started them.
// Like internal/vaultserver it imports no test framework.
package vaultcluster
