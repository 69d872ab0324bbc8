#!/usr/bin/env bash
# Prints the path of a real Vault server binary, building it first when needed.
#
# Order: $VAULT_BIN when set; else the binary cached under the user's cache
# directory, keyed by the content of ci/vault (so a fresh clone on the same
# machine reuses it); else build it there from Vault's own Go packages
# (ci/vault: Vault's core, HTTP API, in-memory, file and Raft storage and KV,
# in dev mode or from a configuration file).
# A cold build (empty module and build caches, 2 cores) takes ~3-5 minutes,
# ~0.8 GB of memory and ~2.6 GB of disk.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${VAULT_BIN:-}" ]; then
  [ -x "$VAULT_BIN" ] || { echo "VAULT_BIN=$VAULT_BIN is not an executable" >&2; exit 1; }
  echo "$VAULT_BIN"; exit 0
fi
key=$("$root/ci/vault-key.sh")
dir="${XDG_CACHE_HOME:-$HOME/.cache}/blacksmith/vault-$key"
bin="$dir/vault"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  echo "building a real Vault server into $bin (first time only, ~3-5 min)..." >&2
  start=$(date +%s)
  (cd "$root/ci/vault" && go build -trimpath -ldflags='-s -w' -o "$bin.tmp" .) >&2
  mv "$bin.tmp" "$bin"
  echo "built Vault in $(( $(date +%s) - start ))s" >&2
fi
echo "$bin"
