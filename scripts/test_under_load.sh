#!/usr/bin/env bash
# The suite on a busy machine: one busy loop per core runs the whole time (at normal priority, like another job on a
# shared runner), and `make test` must still pass, RUNS times in a row (default 2). Prints each run's wall time and
# the load average it saw; exits non-zero at the first failing run. The loops are this script's children and end
# with it (trap), whatever happens.
#
#   bash scripts/test_under_load.sh            # two runs, one busy loop per core
#   RUNS=1 LOOPS=4 bash scripts/test_under_load.sh
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-2}
LOOPS=${LOOPS:-$(nproc)}
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done; }
trap cleanup EXIT INT TERM
for _ in $(seq "$LOOPS"); do
  ( while :; do :; done ) &
  pids+=("$!")
done
echo "busy loops: $LOOPS on $(nproc) cores"
for run in $(seq "$RUNS"); do
  started=$(date +%s)
  make test
  status=$?
  echo "run $run of $RUNS: exit $status after $(( $(date +%s) - started )) s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  [ "$status" -eq 0 ] || exit "$status"
done
