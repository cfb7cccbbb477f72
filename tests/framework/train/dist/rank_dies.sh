#!/usr/bin/env bash
# rank_dies.sh MPIEXEC PROGRAM MODE SECONDS: runs `rank_dies MODE` on 2 ranks and checks that the
# job ends within SECONDS with a non-zero status (and, for MODE=hang, with rank 0's clear error).
set -u
mpiexec=$1 program=$2 mode=$3 limit=$4
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
# The outer timeout only guards the test itself: reaching it is the failure being tested for.
EMBER_DIST_TIMEOUT_S=2 timeout -s KILL $((limit + 30)) "$mpiexec" -n 2 "$program" "$mode" >"$log" 2>&1
rc=$?
elapsed=$(( $(date +%s) - start ))
cat "$log"
echo "rank_dies $mode: exit status $rc after ${elapsed}s (limit ${limit}s)"
[ "$rc" -ne 0 ] || { echo "FAIL: the job ended with status 0"; exit 1; }
[ "$rc" -ne 137 ] || { echo "FAIL: the job hung until the guard killed it"; exit 1; }
[ "$elapsed" -le "$limit" ] || { echo "FAIL: took ${elapsed}s"; exit 1; }
if [ "$mode" = hang ]; then
  grep -q "all_reduce.*got no answer from the other ranks within 2 s" "$log" || { echo "FAIL: no timeout error from rank 0"; exit 1; }
fi
echo PASS
