#!/usr/bin/env bash
# Point-to-point across network namespaces (netns.sh): the p2p test programs
# of tests/mp/p2p (sizes, any-source receives in p2p_matching, nonblocking,
# truncation; every result checked by the programs) on 2 hosts x 1, 2, 3
# ranks and 3 hosts x 1, 2 ranks, then xc-bench pingpong between two hosts,
# 8 B to 64 MiB, each size's last message checked. To stay within CI's time,
# p2p_sizes (the slowest: 14-37 s a run here) runs at 2 x 1, 2 x 2 and 3 x 1
# only; MH_FULL=1 runs every program at every shape.
# Arguments: xcrun xc-bench p2p_sizes p2p_programs...
MH_XCRUN=$1 MH_XC_BENCH=$2 SIZES=$3
shift 3
source "$(dirname "$0")/netns.sh"
mh_hosts 3
mh_need_network_transport

for shape in "2 1" "2 2" "3 1" "2 3" "3 2"; do
  read -r hosts ranks <<<"$shape"
  progs=("$@")
  if [ "${MH_FULL:-0}" = 1 ] || [ $((hosts * ranks)) -le 4 ]; then progs+=("$SIZES"); fi
  for prog in "${progs[@]}"; do
    mh_job "$(basename "$prog").$hosts.$ranks" "$hosts" "$ranks" -- "$prog"
  done
done
mh_job pingpong 2 1 -- "$MH_XC_BENCH" pingpong -b 8 -e 64M -f 16 -n 3 -w 1
mh_finish
