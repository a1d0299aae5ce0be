#!/usr/bin/env bash
# Every rank of a job decides from the same topology: each host's lowest
# rank probes it and the others take its answer. Here the ranks of one host
# are given different topology files; every rank must report the leader's
# (rank 0's: an 8-GPU NVSwitch node), none its own.
set -euo pipefail
xcrun=$1 prog=$2 topo_dir=$3
out=$(XC_DEBUG=INFO "$xcrun" -n 3 bash -c '
  if [ "$XC_RANK" = 0 ]; then export XC_TOPO_FILE=$0/dgx_h100.json; else export XC_TOPO_FILE=$0/pcie4.json; fi
  exec "$1" 3 all' "$topo_dir" "$prog" 2>&1) || { echo "FAIL: the job failed: $out"; exit 1; }
n=$(grep -c 'host topology: fully_connected with 8 GPUs' <<<"$out" || true)
[ "$n" = 3 ] || { echo "FAIL: $n of 3 ranks report the leader's topology:"; echo "$out"; exit 1; }
! grep -q 'host topology: pcie_only' <<<"$out" || { echo "FAIL: a rank kept its own topology"; exit 1; }
echo "ok: 3 ranks agree on the leader's topology"
