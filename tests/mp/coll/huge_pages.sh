#!/usr/bin/env bash
# huge_pages.sh XCRUN PROG N: large allgather(v)/allreduce on buffers from
# xc_mem_alloc (coll_huge_pages.c) go over to single copy where THP is
# offered; with one rank's buffers from malloc, or the pipeline forced by
# XC_ALGO, none does. The program checks every result itself.
set -euo pipefail
xcrun=$1 prog=$2 n=$3
# Ranks that went different ways would wait on each other: fail in seconds,
# not at the default 300 s deadline (every op here takes well under one).
export XC_TIMEOUT=${XC_TIMEOUT:-30000}
switches() { grep -c 'on 2 MiB pages: single copy instead' <<<"$1" || true; }
run() { "$xcrun" -n "$n" "$@" 2>&1; }

out=$(XC_DEBUG=INFO run "$prog" all) || { echo "FAIL: all on xc_mem_alloc: $out"; exit 1; }
got=$(switches "$out")
# Per rank (coll_huge_pages.c): with cores for every rank, allgather(v) of
# 33 MiB in both placements and the 20 MiB allreduce; with more ranks than
# cores, allgather(v) of 5 MiB in both placements. THP off: none.
if [ "$n" -le "$(getconf _NPROCESSORS_ONLN)" ]; then want=$((5 * n)); else want=$((4 * n)); fi
if grep -qs '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled || [ ! -e /sys/kernel/mm/transparent_hugepage/enabled ]; then
  want=0
fi
[ "$got" = "$want" ] || { echo "FAIL: $got switches to single copy, want $want:"; echo "$out"; exit 1; }
echo "ok: all buffers on 2 MiB pages: $got switches to single copy (every rank's count)"

out=$(XC_DEBUG=INFO run "$prog" mixed) || { echo "FAIL: one rank on malloc: $out"; exit 1; }
got=$(switches "$out")
[ "$got" = 0 ] || { echo "FAIL: $got switches with one rank's buffers from malloc"; exit 1; }
echo "ok: one rank on malloc: every rank kept the pipeline"

out=$(XC_DEBUG=INFO XC_ALGO=allgather=shm_staged,allgatherv=shm_staged,allreduce=shm_twoshot run "$prog" all) ||
  { echo "FAIL: forced pipelines: $out"; exit 1; }
got=$(switches "$out")
[ "$got" = 0 ] || { echo "FAIL: $got switches under XC_ALGO"; exit 1; }
echo "ok: XC_ALGO's pipelines stay pipelines"
