#!/usr/bin/env bash
# Point-to-point across network namespaces (netns.sh): the p2p test programs
# of tests/mp/p2p (sizes up to their largest, any-source receives in
# p2p_matching, nonblocking, truncation; every result checked by the
# programs) on 2 hosts x 1, 2, 3 ranks and 3 hosts x 1, 2 ranks, then
# xc-bench pingpong between two hosts with its data check.
# Arguments: xcrun xc-info xc-bench p2p_programs...
MH_XCRUN=$1 MH_XC_INFO=$2 XC_BENCH=$3
shift 3
source "$(dirname "$0")/netns.sh"
mh_hosts 3
mh_need_network_transport

for shape in "2 1" "2 2" "2 3" "3 1" "3 2"; do
  read -r hosts ranks <<<"$shape"
  for prog in "$@"; do
    mh_job "$(basename "$prog").$hosts.$ranks" "$hosts" "$ranks" -- "$prog"
  done
done
# One rank per host, 8 B to 64 MiB (each size's last message checked).
mh_job pingpong 2 1 -- "$XC_BENCH" pingpong -b 8 -e 64M -f 16 -n 3 -w 1
mh_finish
