#!/usr/bin/env bash
# Prints the path of a real Vault server binary, building it first when needed.
#
# Order: $VAULT_BIN when set; else the binary cached under the user's cache
# directory, keyed by ci/vault/go.sum (so a fresh clone on the same machine
# reuses it); else build it there from Vault's own Go packages (ci/vault).
# A cold build takes ~10 minutes, ~4.6 GB of memory and ~7 GB of disk.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ -n "${VAULT_BIN:-}" ]; then
  [ -x "$VAULT_BIN" ] || { echo "VAULT_BIN=$VAULT_BIN is not an executable" >&2; exit 1; }
  echo "$VAULT_BIN"; exit 0
fi
key=$(sha256sum "$root/ci/vault/go.sum" | cut -c1-16)
dir="${XDG_CACHE_HOME:-$HOME/.cache}/blacksmith/vault-$key"
bin="$dir/vault"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  echo "building a real Vault server into $bin (first time only, ~10 min)..." >&2
  start=$(date +%s)
  (cd "$root/ci/vault" && go build -trimpath -ldflags='-s -w' -o "$bin.tmp" .) >&2
  mv "$bin.tmp" "$bin"
  echo "built Vault in $(( $(date +%s) - start ))s" >&2
fi
echo "$bin"
