#!/usr/bin/env bash
# The Spark integration's tests or benchmarks in local mode, on a machine that may have
# neither Java nor PySpark: installs a JRE (Debian's openjdk-17-jre-headless) when `java`
# is missing, PySpark and the package into a scratch venv, builds `diffengine`, then runs
#
#   bash integrations/spark/scripts/run.sh test                 # pytest, both engines
#   bash integrations/spark/scripts/run.sh bench [ARGS...]      # benchmarks.py ARGS
#
# Environment: SPARK_VENV (default /tmp/diffengine-spark-venv); DIFFENGINE_BINARY (default:
# built here from Tools).
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
VENV=${SPARK_VENV:-/tmp/diffengine-spark-venv}
what=${1:-test}
shift || true

if ! command -v java >/dev/null; then
    echo "installing a JRE for Spark"
    apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV"
fi
if ! "$VENV/bin/python" -c "import pyspark, pytest, gresearch.spark.diff" 2>/dev/null; then
    echo "installing PySpark, pytest and spark-extension into $VENV"
    "$VENV/bin/pip" install -q "pyspark>=4,<5" pytest pyspark-extension
fi
"$VENV/bin/pip" install -q --no-deps "$ROOT/integrations/spark"

# DIFFENGINE_BINARY, when set, names a release build of `diffengine` to use instead (CI passes
# the one its benchmark stage built).
if [ -z "${DIFFENGINE_BINARY:-}" ]; then
    swift build -c release --package-path Tools --product diffengine >/dev/null
    export DIFFENGINE_BINARY="$ROOT/Tools/.build/release/diffengine"
fi
[ -x "$DIFFENGINE_BINARY" ] || { echo "run.sh: $DIFFENGINE_BINARY is not an executable" >&2; exit 2; }

case $what in
    test)
        # The installed package is tested, not the source folder.
        cd "$ROOT/integrations/spark/tests"
        "$VENV/bin/python" -m pytest -q -p no:cacheprovider . ;;
    bench)
        "$VENV/bin/python" "$ROOT/integrations/spark/benchmarks.py" "$@" ;;
    *)
        echo "usage: run.sh test | bench [ARGS...]" >&2
        exit 2 ;;
esac
