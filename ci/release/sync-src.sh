#!/usr/bin/env bash
# Copies the blacksmith Go module into the BOSH release's src/ as real files
# (bosh create-release skips files it reaches through a symlinked folder) and
# vendors its dependencies there, so that the release's packaging script
# builds offline (-mod=vendor, GOPROXY=off).
#
#   ci/release/sync-src.sh [DEST]     DEST defaults to manifests/release/src/blacksmith
#
# What is copied: the files git tracks, plus new files it does not ignore, as
# they are in the working tree, without tests (*_test.go, testdata/), the
# release itself, docs, CI, the end-to-end suite and hidden files. DEST is
# replaced; a DEST this script did not write is refused. It also writes
# VERSION (git describe; the package stamps it into `blacksmith version`) and
# SOURCE.txt (where the copy came from). go mod vendor reads the module cache
# and, for what is missing there, GOPROXY: run it once with network access.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
dest=${1:-$root/manifests/release/src/blacksmith}
marker=SOURCE.txt

if [ -e "$dest" ] && [ -n "$(ls -A "$dest")" ] && [ ! -f "$dest/$marker" ]; then
  echo "sync-src: $dest exists and was not written by this script; not replacing it" >&2
  exit 1
fi
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "sync-src: $root is not a git checkout; this script copies the files git knows" >&2
  exit 1
fi

staging=$(mktemp -d "${TMPDIR:-/tmp}/blacksmith-src.XXXXXX")
trap 'rm -rf "$staging"' EXIT

# The list of files, NUL-separated: tracked or new and not ignored, present in
# the working tree (a deleted tracked file is skipped), minus what the package
# does not need.
git -C "$root" ls-files -z --cached --others --exclude-standard |
  grep -zvE '^(manifests|docs|e2e|ci|vendor)/|(^|/)\.|_test\.go$|(^|/)testdata/' |
  while IFS= read -r -d '' f; do
    if [ -f "$root/$f" ]; then printf '%s\0' "$f"; fi
  done |
  sort -zu |
  tar -C "$root" --null --files-from=- --dereference -cf - |
  tar -C "$staging" -xf -

version=$(git -C "$root" describe --tags --always --dirty 2>/dev/null || echo dev)
printf '%s\n' "${version//[^A-Za-z0-9._+-]/_}" >"$staging/VERSION"
{
  echo "Copied by ci/release/sync-src.sh from $root"
  echo "commit $(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown) ($version)"
} >"$staging/$marker"

(
  cd "$staging"
  export GOFLAGS= GOWORK=off
  go mod vendor
  # Hidden files of vendored modules (.gitignore, CI settings) build nothing.
  find vendor -name '.*' -type f -delete
  # Every import of the daemon must now resolve from vendor/, offline.
  GOFLAGS=-mod=vendor GOPROXY=off go list -deps ./cmd/blacksmith >/dev/null
)

rm -rf "$dest"
mkdir -p "$(dirname "$dest")"
mv "$staging" "$dest"
trap - EXIT
echo "sync-src: $dest holds $(find "$dest" -type f | wc -l) files ($(du -sh "$dest" | cut -f1)), version $(cat "$dest/VERSION")"
