#!/usr/bin/env bash
# A real PostgreSQL server for the live-query service's tests and cluster, from Debian's
# `postgresql` package (installed with apt when missing), in a scratch folder, on a loopback
# port, run as the `postgres` user:
#
#   bash scripts/postgres.sh start     # prints the URL to give the service (--database URL)
#   bash scripts/postgres.sh url       # the URL of the running server
#   bash scripts/postgres.sh stop      # stops it and removes the folder
#   bash scripts/postgres.sh restart   # stops and starts it on the same data (a fault test)
#
# Environment: PG_PORT (default 54329), PG_DIR (default /tmp/diffengine-postgres).
set -euo pipefail
PORT=${PG_PORT:-54329}
DIR=${PG_DIR:-/tmp/diffengine-postgres}
DATABASE=orders

bin_dir() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$found" ]; then
        if command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
            echo "postgres: installing postgresql with apt" >&2
            apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
            found=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
        else
            echo "postgres: no PostgreSQL server found; install Debian's postgresql package" >&2
            exit 2
        fi
    fi
    echo "$found"
}

# Runs a server binary as `postgres` when we are root (initdb refuses root).
as_postgres() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

url() { echo "postgres://postgres@127.0.0.1:$PORT/$DATABASE"; }

start() {
    local bin
    bin=$(bin_dir)
    if [ ! -f "$DIR/data/PG_VERSION" ]; then
        mkdir -p "$DIR"
        [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR"
        as_postgres "$bin/initdb" -D "$DIR/data" -U postgres --auth=trust -E UTF8 >"$DIR/initdb.log" 2>&1 \
            || { cat "$DIR/initdb.log" >&2; exit 1; }
    fi
    as_postgres "$bin/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 \
        -o "-h 127.0.0.1 -p $PORT -k $DIR -c wal_level=logical -c max_connections=200" start >/dev/null
    if ! as_postgres "$bin/psql" -h 127.0.0.1 -p "$PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DATABASE'" postgres | grep -q 1; then
        as_postgres "$bin/createdb" -h 127.0.0.1 -p "$PORT" -U postgres "$DATABASE"
    fi
    url
}

stop() {
    local bin
    bin=$(bin_dir)
    if [ -f "$DIR/data/postmaster.pid" ]; then
        as_postgres "$bin/pg_ctl" -D "$DIR/data" -m fast -w -t 60 stop >/dev/null
    fi
    if [ "${1:-}" != keep ]; then rm -rf "$DIR"; fi
}

case ${1:-} in
    start) start ;;
    stop) stop ;;
    restart) stop keep; start ;;
    url) url ;;
    *) echo "usage: $0 start|stop|restart|url" >&2; exit 2 ;;
esac
