# Sourced by the scripts that run nodes of the service on one PostgreSQL (serve-cluster.sh,
# load-test-cluster.sh), from the repository's root: the nodes' process ids go into `pids`,
# and on exit the nodes are killed and the database is stopped.
pids=()
stop_nodes_and_postgres() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    bash scripts/postgres.sh stop
}
trap stop_nodes_and_postgres EXIT
