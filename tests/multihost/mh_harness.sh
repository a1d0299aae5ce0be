#!/usr/bin/env bash
# The multihost harness itself (netns.sh), with nothing that needs a
# transport between hosts: 3 namespaces reach each other; a job of one
# xcrun node per host starts across them (2 hosts x 1, 2 ranks, 3 x 2),
# its ranks count as local exactly those of their own host (XC_HOST_ID),
# reduce within their host, make groups through the bootstrap store, and
# leave nothing in /dev/shm (launch_check nodes=R).
# Arguments: xcrun xc-bench launch_check
MH_XCRUN=$1 MH_XC_BENCH=$2 LAUNCH_CHECK=$3
source "$(dirname "$0")/netns.sh"
mh_hosts 3
for a in 0 1 2; do
  for b in 0 1 2; do
    [ $a = $b ] || mh_reaches $a $b || mh_fail "host $a does not reach host $b"
  done
done
for shape in "2 1" "2 2" "3 2"; do
  read -r hosts ranks <<<"$shape"
  n=$((hosts * ranks))
  mh_job "launch.$hosts.$ranks" "$hosts" "$ranks" -- "$LAUNCH_CHECK" "$n" "nodes=$ranks"
  for ((h = 0; h < hosts; ++h)); do
    for ((l = 0; l < ranks; ++l)); do
      r=$((h * ranks + l))
      grep -q "^\[$r\] rank $r of $n: ok (local $l of $ranks)\$" <<<"$(mh_out "launch.$hosts.$ranks" "$h")" ||
        mh_fail "launch.$hosts.$ranks: rank $r on host $h did not report local $l of $ranks"
    done
  done
done
mh_finish
