// Package config loads blacksmith's configuration: the YAML file
// blacksmith.conf (path given with -c), then the environment over it, then
// defaults for whatever neither sets.
//
// Loading is strict. Unknown keys are rejected by their full dotted path
// (reconciler.backup.retenion), every value is parsed with its own type
// (durations are Go durations such as 30s or 1h), a false written in the file
// stays false, and the result is validated as a whole. Every problem found is
// reported at once in a *Problems, one line per problem, each naming the file
// key or the environment variable it came from.
//
// Every scalar key has exactly one environment variable (see Environment):
// the names the Vault and BOSH command-line tools use where they have one
// (VAULT_ADDR, VAULT_TOKEN, VAULT_CACERT, VAULT_SKIP_VERIFY, BOSH_ENVIRONMENT,
// BOSH_CLIENT, BOSH_CLIENT_SECRET, BOSH_CA_CERT), BLACKSMITH_<SECTION>_<KEY>
// for the rest. An empty variable counts as unset. DEBUG=true is honoured as
// an alias of BLACKSMITH_DEBUG when the latter is unset.
//
// CheckConfig is the logic behind `blacksmith check-config -c FILE`.
package config
