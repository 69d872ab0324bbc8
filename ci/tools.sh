#!/usr/bin/env bash
# Installs the tools the suites use that a fresh machine lacks, and says
# what it installs: promtool (Debian's prometheus: /metrics and the alerting
# rules), ruby (the BOSH job templates' ERB) and chromium (headless: the
# dashboard's browser specs). It uses apt-get, as root or through a sudo
# that asks no password; where it cannot, it says what is missing and goes
# on (outside CI=true the suites that need a tool skip and say why; under
# CI=true they fail). `make test` and `.ci/run` call it.
set -euo pipefail

missing=()
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v ruby >/dev/null 2>&1 || missing+=(ruby)
command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing+=(chromium)
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    echo "ci/tools.sh: missing ${missing[*]}; not root and no password-less sudo: install them (apt-get install ${missing[*]})" >&2
    exit 0
  fi
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ci/tools.sh: missing ${missing[*]}; no apt-get here: install them with this system's package manager" >&2
  exit 0
fi
echo "ci/tools.sh: installing ${missing[*]} with apt-get (the suites need them)" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
