#!/usr/bin/env bash
# NODES nodes of the live-query service (first argument, default 3) on one PostgreSQL:
# starts the database (scripts/postgres.sh), seeds it through the first node, starts the
# nodes on ports 8081, 8082, … (loopback), and stops them and the database on Ctrl-C.
# Any node serves any client: put a load balancer in front (see the README).
set -euo pipefail
cd "$(dirname "$0")/../../.."
NODES=${1:-3}
SEED=${SEED:-10000}
swift build -c release --package-path Examples/LiveQueryService --product live-query-service
binary=$(swift build -c release --package-path Examples/LiveQueryService --show-bin-path)/live-query-service
# The nodes check tokens signed with one secret: TOKEN_SECRET_FILE, else a new one here.
secret=${TOKEN_SECRET_FILE:-}
if [ -z "$secret" ]; then
    secret=$(mktemp -d)/token-secret
    head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$secret"
fi
url=$(bash scripts/postgres.sh start)
source Examples/LiveQueryService/scripts/nodes.sh
trap 'exit 0' INT TERM
for node in $(seq 1 "$NODES"); do
    "$binary" --port $((8080 + node)) --database "$url" --seed "$SEED" --token-secret-file "$secret" &
    pids+=($!)
done
echo "serve-cluster: $NODES nodes on http://127.0.0.1:8081/ … http://127.0.0.1:$((8080 + NODES))/ over $url; Ctrl-C stops them"
echo "serve-cluster: an admin's page for an hour: http://127.0.0.1:8081/#access_token=$("$binary" token --admin --token-secret-file "$secret")"
echo "serve-cluster: more tokens: $binary token (--admin | --customer NAME) --token-secret-file $secret"
wait
