#!/usr/bin/env bash
# balance.sh XCRUN PROG N: with more ranks than cores and all of them started
# on one cpu (coll_balance.c), some move to another cpu (the log says so),
# and none with XC_SHM_COLL_BALANCE=0. Skipped (77) unless N ranks
# outnumber the cores and this process may use two cpus or more.
set -euo pipefail
xcrun=$1 prog=$2 n=$3
cores=$(getconf _NPROCESSORS_ONLN)
allowed=$(nproc)
if [ "$n" -le "$cores" ] || [ "$allowed" -lt 2 ]; then
  echo "skip: $n ranks on $cores cores ($allowed allowed) are not oversubscribed on two cpus or more"
  exit 77
fi
export XC_TIMEOUT=${XC_TIMEOUT:-30000}
moves() { grep -c 'moves to cpu' <<<"$1" || true; }

out=$(XC_DEBUG=INFO "$xcrun" -n "$n" "$prog" 2>&1) || { echo "FAIL: $out"; exit 1; }
got=$(moves "$out")
[ "$got" -gt 0 ] || { echo "FAIL: no rank moved off the crowded cpu:"; echo "$out"; exit 1; }
echo "ok: $got moves, results right, masks unchanged"

out=$(XC_DEBUG=INFO XC_SHM_COLL_BALANCE=0 "$xcrun" -n "$n" "$prog" 2>&1) || { echo "FAIL: $out"; exit 1; }
got=$(moves "$out")
[ "$got" = 0 ] || { echo "FAIL: $got moves with XC_SHM_COLL_BALANCE=0"; exit 1; }
echo "ok: XC_SHM_COLL_BALANCE=0 moves nobody"
