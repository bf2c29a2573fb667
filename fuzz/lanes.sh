# Sourced by fuzz/run.sh and fuzz/clusterfuzzlite-check.sh.
#
# in_lanes JOBS FUNCTION NAME…: runs FUNCTION NAME for every NAME, JOBS at a time (each in
# the background: what it prints comes when it prints it), and fails when any of them failed.
in_lanes() {
    local jobs=$1 function=$2 running=0 failed=0 name
    shift 2
    for name in "$@"; do
        if [ "$running" -ge "$jobs" ]; then
            wait -n || failed=1
            running=$((running - 1))
        fi
        "$function" "$name" &
        running=$((running + 1))
    done
    while [ "$running" -gt 0 ]; do
        wait -n || failed=1
        running=$((running - 1))
    done
    return "$failed"
}
