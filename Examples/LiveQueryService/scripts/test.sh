#!/usr/bin/env bash
# The live-query service's tests on both stores: starts a PostgreSQL server (scripts/postgres.sh,
# which installs Debian's package when missing), runs `swift test` with LIVE_QUERY_POSTGRES
# pointing at it, and stops the server, whatever the tests did.
set -euo pipefail
cd "$(dirname "$0")/../../.."
export PG_PORT=${PG_PORT:-54331} PG_DIR=${PG_DIR:-/tmp/diffengine-postgres-tests}
trap 'bash scripts/postgres.sh stop' EXIT
url=$(bash scripts/postgres.sh start)
LIVE_QUERY_POSTGRES=${url%/*}/postgres swift test --package-path Examples/LiveQueryService "$@"
