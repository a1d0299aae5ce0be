#!/usr/bin/env bash
# Collectives across network namespaces (netns.sh), on 2 hosts x 1, 2, 3
# ranks and 3 hosts x 1, 2 ranks: the quick collective matrix (every op x
# dtype x reduction x placement x root, results checked against a local
# reference), the communicator tests whose groups span hosts (split,
# split_groups, create_group), and xc-bench sweeps up to 64 MiB with every
# element checked (allreduce, allgather, alltoall, broadcast,
# reduce_scatter) at 2 x 2 and 3 x 1.
# Arguments: xcrun xc-info xc-bench coll_matrix comm_programs...
MH_XCRUN=$1 MH_XC_INFO=$2 XC_BENCH=$3 COLL_MATRIX=$4
shift 4
source "$(dirname "$0")/netns.sh"
mh_hosts 3
mh_need_network_transport

for shape in "2 1" "2 2" "2 3" "3 1" "3 2"; do
  read -r hosts ranks <<<"$shape"
  mh_job "coll_matrix.$hosts.$ranks" "$hosts" "$ranks" --timeout 120 -- "$COLL_MATRIX" --quick
  for prog in "$@"; do
    mh_job "$(basename "$prog").$hosts.$ranks" "$hosts" "$ranks" -- "$prog"
  done
done
for shape in "2 2" "3 1"; do
  read -r hosts ranks <<<"$shape"
  for op in allreduce allgather alltoall broadcast reduce_scatter; do
    mh_job "$op.$hosts.$ranks" "$hosts" "$ranks" -- "$XC_BENCH" "$op" -b 1M -e 64M -f 8 -n 1 -w 0 -c 1
  done
done
mh_finish
