#!/usr/bin/env bash
# contended.sh XCRUN XC_BENCH: a large 2-rank allgather while other
# processes keep every core but one busy (a noisy neighbour) gives its
# staged pipeline up for single copy (ranks copy on their own instead of in
# lock step), and its results are right (xc-bench -c 1 checks every element
# on every rank, exit 1 on a wrong one). Which way each op went is read from
# the log.
set -euo pipefail
xcrun=$1 bench=$2
export XC_TIMEOUT=${XC_TIMEOUT:-60000}
cores=$(getconf _NPROCESSORS_ONLN)
hogs=()
stop() { [ ${#hogs[@]} -eq 0 ] || kill "${hogs[@]}" 2>/dev/null || true; }
trap stop EXIT
# cores - 1 spinning processes: with the 2 ranks, more runnable tasks than cores.
for ((i = 0; i < cores - 1 && i < 63; ++i)); do
  sh -c 'while :; do :; done' &
  hogs+=($!)
done
out=$(XC_DEBUG=INFO "$xcrun" -n 2 "$bench" allgather -b 32M -e 64M -f 2 -n 2 -w 1 -c 1 2>&1) ||
  { echo "FAIL: xc-bench allgather with busy cores:"; echo "$out"; exit 1; }
switched=$(grep -c "waits for its core (a busy neighbour): single copy instead" <<<"$out" || true)
[ "$switched" -gt 0 ] || { echo "FAIL: no allgather gave the pipeline up for single copy:"; echo "$out"; exit 1; }
grep -E '^ +[0-9]+ ' <<<"$out"
echo "ok: $switched allgathers (counted on both ranks) went single copy with busy cores; results checked"
stop
hogs=()
