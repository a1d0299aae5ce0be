#!/usr/bin/env bash
# info_peers.sh XCRUN ON_HOSTS XC_INFO: xc-info --peers in a job of 2 hosts
# x 2 ranks names shm for the 4 same-host pairs and UCX (with the transport
# UCX chose, here TCP) for the 8 cross-host ones.
set -u
out=$("$1" -n 4 "$2" 2 "$3" --peers 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; exit 1; }
echo "$out" | grep -Eq '^  same host: shm +4$' || { echo "FAIL: no 'same host: shm' line with 4 pairs"; exit 1; }
echo "$out" | grep -Eq '^  other host: ucx tcp/[a-z0-9]+ +8$' || { echo "FAIL: no 'other host: ucx tcp/...' line with 8 pairs"; exit 1; }
echo "ok"
