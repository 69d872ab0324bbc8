// Package e2e is the end-to-end suite: it builds the real blacksmith and
// bosh-director-sim binaries, starts them against a real Vault dev server,
// and drives the daemon as a platform would, with a real Open Service
// Broker client (sigs.k8s.io/go-open-service-broker-client/v2), and as an
// operator would, with curl-like HTTP calls, Prometheus's promtool and
// signals. Run it with `go test ./e2e/`; it needs a Vault binary (see
// internal/testvault) and, under CI=true, promtool. E2E_RACE=true builds the
// daemon with the race detector.
package e2e
