#!/usr/bin/env bash
# `make run`: a real Vault dev server, the BOSH Director simulator with sample
# deployments, the Cloud Controller simulator whose broker is this blacksmith,
# and blacksmith in the foreground. Ctrl-C stops all of it.
#
#   Vault     http://127.0.0.1:8200   (root token "root", in-memory)
#   Director  https://127.0.0.1:25555 (admin/admin, CA in tmp/run/director-ca.pem)
#   CC        http://127.0.0.1:9022   (Cloud Controller v3 simulator; UAA client blacksmith-cc/secret)
#   Broker    http://127.0.0.1:3000   (OSB: broker/broker; /b/* and /dashboard: operator/operator)
#
# Sample state: 4 deployments that match the sample catalog, one that does not
# (`concourse`), and a legacy Blacksmith `db` in Vault naming two of them plus an
# instance whose deployment is gone: the orphan-to-be. The platform (the CC
# simulator, broker "blacksmith") has three of the four deployments' instances
# and the orphan-to-be's; not the first deployment's (in Vault and BOSH only: an
# orphan deployment), and one instance nobody else has (platform only).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
run=tmp/run
rm -rf "$run" && mkdir -p "$run"
vault_bin=${VAULT_BIN:-$(ci/vault-bin.sh)}
blacksmith_bin=${BLACKSMITH_BIN:-bin/blacksmith}      # `make run` builds both
sim_bin=${DIRECTOR_SIM_BIN:-bin/bosh-director-sim}
cc_bin=${CC_SIM_BIN:-bin/cc-sim}

pids=()
cleanup() {
  trap - INT TERM EXIT
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "make run: stopped Vault, the Director and Cloud Controller simulators and blacksmith"
}
trap cleanup INT TERM EXIT

for port in 8200 25555 9022 3000; do
  if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
    echo "make run: 127.0.0.1:$port is already in use; stop what listens there first" >&2
    exit 1
  fi
done

wait_for() { # url what
  for _ in $(seq 1 100); do curl -skf -o /dev/null "$1" && return 0; sleep 0.1; done
  echo "make run: $2 did not come up ($1); see $run/*.log" >&2; exit 1
}

HOME="$root/$run" "$vault_bin" server -dev -dev-root-token-id=root \
  -dev-listen-address=127.0.0.1:8200 -dev-no-store-token >"$run/vault.log" 2>&1 &
pids+=($!)
"$sim_bin" -listen 127.0.0.1:25555 -tls -ca-cert "$run/director-ca.pem" \
  -release redis/16.1.0 -release postgres/16.4.0 -stemcell ubuntu-jammy/1.506 \
  -task-duration 3s >"$run/director.log" 2>&1 &
pids+=($!)
"$cc_bin" -listen 127.0.0.1:9022 -broker blacksmith -poll-interval 2s >"$run/cc.log" 2>&1 &
pids+=($!)
wait_for http://127.0.0.1:8200/v1/sys/health "Vault"
wait_for https://127.0.0.1:25555/info "the Director simulator"
wait_for http://127.0.0.1:9022/ "the Cloud Controller simulator"

sim=https://127.0.0.1:25555/_sim
ca=(--cacert "$run/director-ca.pem")
seed='{"count":4,"plans":[{"service_id":"redis","plan_id":"redis-small","release":"redis"},{"service_id":"postgresql","plan_id":"postgresql-small","release":"postgres"}]}'
names=$(curl -sf "${ca[@]}" -X POST -d "$seed" "$sim/seed")
curl -sf "${ca[@]}" -X PUT -H 'Content-Type: text/yaml' --data-binary @manifests/run/unmatched.yml "$sim/deployments" >/dev/null
first=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["names"][0])' <<<"$names")
id1=${first#redis-small-}
orphan=0f9c5b1e-7d2a-4c1e-9a3b-5e8d7c6b4a21
created=$(( $(date +%s) - 86400 ))
cat >"$run/db.json" <<JSON
{"data": {
  "$id1": {"service_id": "redis", "plan_id": "redis-small", "created": $created,
           "organization_guid": "org-1", "space_guid": "space-1", "note": "kept by every write"},
  "$orphan": {"service_id": "redis", "plan_id": "redis-small", "created": $created}
}}
JSON
curl -sf -H 'X-Vault-Token: root' -X POST --data @"$run/db.json" \
  http://127.0.0.1:8200/v1/secret/data/db >/dev/null

# The platform's instances: every seeded deployment's but the first one's, the
# orphan-to-be's, and one the broker never heard of.
platform_only=7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f
for name in $(python3 -c 'import json,sys; print(" ".join(json.load(sys.stdin)["names"][1:]))' <<<"$names") \
    "redis-small-$orphan" "redis-small-$platform_only"; do
  plan=${name%-*-*-*-*-*}
  guid=${name#"$plan"-}
  curl -sf -X POST -d "{\"guid\":\"$guid\",\"name\":\"$plan-${guid:0:8}\",\"plan\":\"$plan\",\"org\":\"demo-org\",\"space\":\"demo-space\"}" \
    http://127.0.0.1:9022/_sim/service_instances >/dev/null
done

echo "make run: Director deployments: $(curl -sf "${ca[@]}" -u admin:admin https://127.0.0.1:25555/deployments | python3 -c 'import json,sys; print(", ".join(d["name"] for d in json.load(sys.stdin)))')"
echo "make run: legacy Blacksmith db in Vault: $id1 (deployed), $orphan (orphan-to-be)"
echo "make run: the platform lacks $id1 (an orphan deployment) and has $platform_only (platform only)"
echo "make run: blacksmith on http://127.0.0.1:3000 (OSB broker/broker; /b/* and /dashboard operator/operator, viewer/viewer); Ctrl-C stops everything"
"$blacksmith_bin" -c manifests/run/blacksmith.conf &
pids+=($!)

# The platform's broker "blacksmith" is this daemon: the Cloud Controller
# fetches its catalog (PATCH /v3/service_brokers/:guid, a job), and from then
# on a `cf create-service` (POST /v3/service_instances) reaches it as it would
# on a foundation.
for _ in $(seq 1 100); do
  curl -sf -o /dev/null -u broker:broker -H 'X-Broker-API-Version: 2.15' http://127.0.0.1:3000/v2/catalog && break
  sleep 0.1
done
token=$(curl -sf -u blacksmith-cc:secret -d grant_type=client_credentials http://127.0.0.1:9022/login/oauth/token |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
broker=$(curl -sf -H "Authorization: bearer $token" 'http://127.0.0.1:9022/v3/service_brokers?names=blacksmith' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["resources"][0]["guid"])')
job=$(curl -sf -o /dev/null -D - -X PATCH -H "Authorization: bearer $token" -H 'Content-Type: application/json' \
  -d '{"url":"http://127.0.0.1:3000","authentication":{"type":"basic","credentials":{"username":"broker","password":"broker"}}}' \
  "http://127.0.0.1:9022/v3/service_brokers/$broker" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p') || job=
state=
for _ in $(seq 1 100); do
  [ -n "$job" ] || break
  state=$(curl -sf -H "Authorization: bearer $token" "$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])') || break
  [ "$state" != PROCESSING ] && break
  sleep 0.1
done
if [ "$state" != COMPLETE ]; then
  echo "make run: could not point the Cloud Controller's broker at blacksmith (job ${job:-not started}: ${state:-no answer}); see $run/cc.log" >&2
  exit 1
fi
echo "make run: the Cloud Controller's broker \"blacksmith\" is this daemon: cf api http://127.0.0.1:9022; cf auth blacksmith-cc secret --client-credentials; cf target -o demo-org -s demo-space"
wait "${pids[-1]}"
