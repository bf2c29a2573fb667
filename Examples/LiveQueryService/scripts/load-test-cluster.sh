#!/usr/bin/env bash
# The cluster's load test, on loopback only and bounded: a fresh PostgreSQL (scripts/postgres.sh
# on its own port and folder) with ROWS orders (100,000), NODES nodes of the service (3) that
# check tokens, then CLIENTS WebSocket clients (1,500) spread over the nodes on 10 queries
# while 200 commits a second of 5 rows each go through the nodes for SECONDS_RUN seconds (30),
# from WRITERS concurrent writers (8).
# Node KILL_NODE (1, the second) is killed at second KILL_AT (10; empty: none): its clients
# reconnect to the next node. Prints latency, event sizes, the nodes' CPU and memory and the
# reconnections, checks that every client ends at PostgreSQL's rows, and stops everything.
# LIVE_QUERY_BIN: a folder with live-query-service and live-query-load to run instead of
# building them; CONFIGURATION: the build to make otherwise (release).
set -euo pipefail
cd "$(dirname "$0")/../../.."
SERVICE=Examples/LiveQueryService
OUT=${OUT:-$SERVICE/.build/load-test-cluster}
NODES=${NODES:-3}
if [ -n "${LIVE_QUERY_BIN:-}" ]; then
    bin=$LIVE_QUERY_BIN # binaries built elsewhere, e.g. of another commit, to compare side by side
else
    configuration=${CONFIGURATION:-release} # CI's smoke run uses the debug build its tests made
    swift build -c "$configuration" --package-path "$SERVICE" --product live-query-service
    swift build -c "$configuration" --package-path "$SERVICE" --product live-query-load
    bin=$(swift build -c "$configuration" --package-path "$SERVICE" --show-bin-path)
fi
rm -rf "$OUT" && mkdir -p "$OUT"
ulimit -n 16384 || true
export PG_PORT=${PG_PORT:-54335} PG_DIR=${PG_DIR:-/tmp/diffengine-postgres-load}
bash scripts/postgres.sh stop >/dev/null 2>&1 || true # a fresh database every run
source Examples/LiveQueryService/scripts/nodes.sh
url=$(bash scripts/postgres.sh start)
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$OUT/token-secret"
ports=()
for node in $(seq 1 "$NODES"); do
    # The first node creates and seeds the table; the others start once it has.
    "$bin/live-query-service" --port 0 --database "$url" --seed "${ROWS:-100000}" --token-secret-file "$OUT/token-secret" \
        >"$OUT/node-$node.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 600); do grep -q "live-query-service: http" "$OUT/node-$node.log" && break; sleep 0.1; done
    port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$OUT/node-$node.log" | head -1)
    [ -n "$port" ] || { cat "$OUT/node-$node.log"; exit 1; }
    ports+=("$port")
done
token=$("$bin/live-query-service" token --admin --expires-in 3600 --token-secret-file "$OUT/token-secret")
kill_options=()
[ -n "${KILL_AT-10}" ] && kill_options=(--kill-node "${KILL_NODE:-1}" --kill-at "${KILL_AT:-10}")
"$bin/live-query-load" --ports "$(IFS=,; echo "${ports[*]}")" --postgres "$url" --server-pid "$(IFS=,; echo "${pids[*]}")" \
    --clients "${CLIENTS:-1500}" --queries "${QUERIES:-10}" --commits "${COMMITS:-200}" --writers "${WRITERS:-8}" \
    --changes "${CHANGES:-5}" --seconds "${SECONDS_RUN:-30}" --token "$token" "${kill_options[@]}"
