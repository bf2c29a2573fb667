#!/usr/bin/env bash
# The load test, on loopback only and bounded: a fresh 100,000-row database, the service,
# then CLIENTS WebSocket clients on QUERIES live queries while COMMITS commits a second of
# CHANGES rows each run for SECONDS seconds (defaults: 1,000 / 10 / 200 / 5 / 30 — 1% of the
# table changes every second). Prints latency, event sizes, server CPU and memory, and
# checks that every client converged to SQLite's rows. With AUTH=1 the service checks tokens
# (a fresh secret) and every client and the writer send an admin token; without, it runs
# --insecure-no-auth: the two runs measure what checking tokens costs. With CUSTOMERS=K the
# clients are K customers (tokens signed with the same fresh secret), each query scoped to
# its customer: K × QUERIES observations where the open service shares QUERIES.
# LIVE_QUERY_BIN: a folder with live-query-service and live-query-load to run instead of
# building them.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-.build/load-test}
if [ -n "${LIVE_QUERY_BIN:-}" ]; then
    BIN=$LIVE_QUERY_BIN # binaries built elsewhere, e.g. of another commit, to compare side by side
else
    swift build -c release --product live-query-service
    swift build -c release --product live-query-load
    BIN=.build/release
fi
rm -rf "$OUT" && mkdir -p "$OUT"
ulimit -n 8192 || true
AUTHENTICATION=(--insecure-no-auth) TOKEN=()
if [ "${AUTH:-0}" = 1 ] || [ -n "${CUSTOMERS:-}" ]; then
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$OUT/token-secret"
    AUTHENTICATION=(--token-secret-file "$OUT/token-secret")
    TOKEN=(--token "$("$BIN/live-query-service" token --admin --expires-in 3600 --token-secret-file "$OUT/token-secret")")
    [ -n "${CUSTOMERS:-}" ] && TOKEN+=(--token-secret-file "$OUT/token-secret" --customers "$CUSTOMERS")
fi
"$BIN/live-query-service" --port 0 --database "$OUT/orders.sqlite" --seed "${ROWS:-100000}" "${AUTHENTICATION[@]}" >"$OUT/server.log" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 300); do grep -q "live-query-service: http" "$OUT/server.log" && break; sleep 0.1; done
PORT=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$OUT/server.log" | head -1)
[ -n "$PORT" ] || { cat "$OUT/server.log"; exit 1; }
"$BIN/live-query-load" --port "$PORT" --database "$OUT/orders.sqlite" --server-pid "$SERVER" \
    --clients "${CLIENTS:-1000}" --queries "${QUERIES:-10}" --commits "${COMMITS:-200}" \
    --changes "${CHANGES:-5}" --seconds "${SECONDS_RUN:-30}" "${TOKEN[@]}"
