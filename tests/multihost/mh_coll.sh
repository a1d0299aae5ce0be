#!/usr/bin/env bash
# Collectives across network namespaces (netns.sh), on 2 hosts x 1, 2, 3
# ranks and 3 hosts x 1, 2 ranks, results checked against a local reference:
#   - the quick collective matrix (every op x dtype x reduction x placement
#     x root): all 16 ops at 2 x 1, and allreduce, allgatherv, alltoallv and
#     broadcast at the other shapes (every op at every shape takes 4 minutes
#     here: 14 ms a case at 3 x 2; MH_FULL=1 runs it);
#   - the communicator tests whose groups span hosts (split, split_groups,
#     create_group) at 2 x 2 and 3 x 2 (MH_FULL=1: every shape);
#   - xc-bench at 64 MiB, every element checked: allreduce and alltoall at
#     2 x 2 (MH_FULL=1: allreduce, allgather, alltoall, broadcast and
#     reduce_scatter from 1 MiB to 64 MiB at 2 x 2 and 3 x 1).
# Arguments: xcrun xc-bench coll_matrix comm_programs...
MH_XCRUN=$1 MH_XC_BENCH=$2 COLL_MATRIX=$3
shift 3
source "$(dirname "$0")/netns.sh"
mh_hosts 3
mh_need_network_transport
full=${MH_FULL:-0}

for shape in "2 1" "2 2" "2 3" "3 1" "3 2"; do
  read -r hosts ranks <<<"$shape"
  ops=()
  [ "$shape" = "2 1" ] || [ "$full" = 1 ] || ops=(allreduce,allgatherv,alltoallv,broadcast)
  mh_job "coll_matrix.$hosts.$ranks" "$hosts" "$ranks" --timeout 180 -- "$COLL_MATRIX" --quick "${ops[@]}"
  if [ "$full" = 1 ] || [ "$shape" = "2 2" ] || [ "$shape" = "3 2" ]; then
    for prog in "$@"; do
      mh_job "$(basename "$prog").$hosts.$ranks" "$hosts" "$ranks" -- "$prog"
    done
  fi
done
if [ "$full" = 1 ]; then
  for shape in "2 2" "3 1"; do
    read -r hosts ranks <<<"$shape"
    for op in allreduce allgather alltoall broadcast reduce_scatter; do
      mh_job "$op.$hosts.$ranks" "$hosts" "$ranks" -- "$MH_XC_BENCH" "$op" -b 1M -e 64M -f 8 -n 1 -w 0 -c 1
    done
  done
else
  for op in allreduce alltoall; do
    mh_job "$op.2.2" 2 2 -- "$MH_XC_BENCH" "$op" -b 64M -e 64M -n 1 -w 0 -c 1
  done
fi
mh_finish
