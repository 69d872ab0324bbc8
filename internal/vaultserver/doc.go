// Package vaultserver builds nothing and mocks nothing: it finds a real
// HashiCorp Vault binary (the one ci/vault-bin.sh builds from Vault's own
// packages, or $VAULT_BIN) and runs it as a dev server on 127.0.0.1 until
// Stop. It imports no test framework, so the benchmark binary can use it;
// internal/testvault builds the Ginkgo suite helpers on it.
package vaultserver
