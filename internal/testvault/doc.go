// Package testvault gives Ginkgo suites a real HashiCorp Vault dev server,
// started by internal/vaultserver: never a mock. ForSuite starts one for a
// suite and stops it at cleanup. When no binary can be found the spec is
// skipped with the reason on a developer's machine and fails under CI=true.
//
// Server, Options, Start and ErrNoBinary are vaultserver's, under the names
// the suites already use.
package testvault
