// Package testvault starts a real HashiCorp Vault server in dev mode for test
// suites. It never mocks Vault: the binary is the one ci/vault-bin.sh builds
// from Vault's own packages (or $VAULT_BIN). When no binary can be found the
// caller is told why; under CI=true the suites must fail rather than skip.
package testvault
