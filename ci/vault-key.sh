#!/usr/bin/env bash
# Prints the cache key of the Vault server ci/vault builds: the first 16 hex
# digits of the sha256 over every file of ci/vault, sorted by path, each as
# its path ("./go.mod"), a newline and its content. internal/vaultserver
# computes the same to find the cached binary (a spec holds them equal).
set -euo pipefail
cd "$(dirname "$0")/vault"
find . -type f | LC_ALL=C sort | while IFS= read -r f; do printf '%s\n' "$f"; cat "$f"; done | sha256sum | cut -c1-16
