#!/usr/bin/env bash
# mh_bench.sh p2p|coll [BUILD_DIR]   (as root, from the repository root)
#
# Measurements between network namespaces (tests/multihost/netns.sh: each
# namespace a "host", joined by a bridge, TCP between them), printing each
# side's own table; docs/benchmarks.md ("Across hosts") says how to read them.
#
#   p2p   two hosts, one process each: ucx_perftest (server on host 0,
#         client on host 1, UCX_TLS=tcp) tag_lat and tag_bw at 8 B, 1 MiB,
#         16 MiB and 64 MiB, beside xc-bench pingpong over xcrun --nnodes 2
#         at 8 B and 1 MiB to 64 MiB.
#   coll  two hosts x two ranks: xc-bench allreduce, allgather, alltoall from
#         8 B to 64 MiB beside Open MPI's twin, docs/bench/ompi_bench.c
#         (the program docs/bench/compare.sh uses; built here with mpicc into
#         BUILD_DIR/ompi_bench when missing), under mpirun on the same two
#         namespaces: btl tcp,self,vader, pml ob1.
#
# Environment: ITERS, WARMUP (timed and untimed calls per row of the
# collectives; default 5 and 1: 64 MiB moves slowly over the veths),
# OPS (default "allreduce allgather alltoall").
# Numbers from one 2-core machine running 4 ranks are noisy: repeat runs.
set -u
mode=${1:-}
build=$(cd "${2:-build}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case $mode in p2p | coll) ;; *) echo "usage: $0 p2p|coll [BUILD_DIR]" >&2; exit 2 ;; esac
MH_XCRUN=$build/src/tools/xcrun
MH_XC_BENCH=$build/src/tools/xc-bench
for f in "$MH_XCRUN" "$MH_XC_BENCH"; do
  [ -x "$f" ] || { echo "mh_bench.sh: $f is missing; build first (ninja -C $build)" >&2; exit 1; }
done
source "$here/../netns.sh"
UCX_ENV=(UCX_TLS=tcp UCX_NET_DEVICES=eth0)

# xc-bench on the job's host 0 (rank 0 prints), without xcrun's "[0] " tag.
xc_table() {  # NAME H R BENCH_ARGS...
  local name=$1 hosts=$2 ranks=$3
  shift 3
  # More ranks than cores in all: each host's ranks cannot see the others'
  # and would spin as if they had cores to spare; the oversubscribed spins
  # (engine: 20 polls, shared-memory collectives: none, then yield and
  # sleep) are what Open MPI's yield_when_idle is below.
  local spin=${XC_SPIN:-} coll_spin=${XC_SHM_COLL_SPIN:-}
  if [ $((hosts * ranks)) -gt "$(nproc)" ]; then
    spin=${spin:-20}
    coll_spin=${coll_spin:-0}
  fi
  XC_SPIN=${spin:-2000} XC_SHM_COLL_SPIN=${coll_spin:-2000} mh_job "$name" "$hosts" "$ranks" --timeout 600 -- "$MH_XC_BENCH" "$@"
  sed -n 's/^\[0\] //p' "$MH_DIR/$name.0.out"
}

# One ucx_perftest pair; prints a row: test, size, iterations, latency
# median and average (µs), bandwidth overall (MB/s), from the client's
# "Final:" line (the median: on a busy 2-core machine a few late round
# trips move the average by tens of µs).
perftest() {  # TEST SIZE ITERS
  local port deadline
  port=$(mh_port)
  run_on 0 env "${UCX_ENV[@]}" timeout 300 ucx_perftest -p "$port" -t "$1" -s "$2" -n "$3" \
    >"$MH_DIR/perf.srv" 2>&1 &
  local srv=$!
  deadline=$((SECONDS + 10))
  until run_on 0 ss -Hltn "sport = :$port" | grep -q .; do  # the server listens: start the client
    [ $SECONDS -lt $deadline ] || { echo "ucx_perftest server did not listen:"; cat "$MH_DIR/perf.srv"; return 1; }
    sleep 0.05
  done
  run_on 1 env "${UCX_ENV[@]}" timeout 300 ucx_perftest "$(mh_addr 0)" -p "$port" -t "$1" -s "$2" -n "$3" \
    >"$MH_DIR/perf.cli" 2>&1
  wait "$srv"
  awk -v t="$1" -v s="$2" '/^Final:/ { printf "| %-7s | %9s | %6s | %10s | %10s | %10s |\n", t, s, $2, $3, $4, $7 }' \
    "$MH_DIR/perf.cli"
  grep -q '^Final:' "$MH_DIR/perf.cli" || { echo "ucx_perftest $1 $2 failed:"; tail -n 5 "$MH_DIR/perf.cli"; }
}

if [ "$mode" = p2p ]; then
  mh_hosts 2
  command -v ucx_perftest >/dev/null || echo "ucx_perftest is not installed (Debian: ucx-utils): its table is left out"
  if command -v ucx_perftest >/dev/null; then
    echo "## ucx_perftest, host 0 <-> host 1 (UCX_TLS=tcp)"
    echo "| test    |  size (B) |  iters | lat p50 µs | lat avg µs | bw MB/s    |"
    echo "|---------|-----------|--------|------------|------------|------------|"
    for t in tag_lat tag_bw; do
      for spec in "8 10000" "1048576 100" "16777216 20" "67108864 10"; do
        read -r size iters <<<"$spec"
        perftest "$t" "$size" "$iters"
      done
    done
  fi
  echo
  echo "## xc-bench pingpong, host 0 <-> host 1 (xcrun --nnodes 2 -n 1, UCX_TLS=tcp)"
  xc_table pp_small 2 1 pingpong -b 8 -e 8 -n 10000 -w 100
  xc_table pp_large 2 1 pingpong -b 1M -e 64M -f 4 -n 10 -w 2
  mh_finish
fi

# coll
mh_hosts 2
iters=${ITERS:-5} warmup=${WARMUP:-1}
ranges=("-b 8 -e 1M -f 8" "-b 1M -e 64M -f 8")  # 8 B .. 256 KiB, then 1, 8, 64 MiB
have_mpi=1
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  have_mpi=0
  echo "Open MPI is not installed (no mpicc/mpirun; Debian: openmpi-bin libopenmpi-dev): xcomm only"
else
  ompi_bench=$build/ompi_bench
  if [ ! -x "$ompi_bench" ] || [ "$here/../../../docs/bench/ompi_bench.c" -nt "$ompi_bench" ]; then
    mpicc -O2 -std=c99 -Wall -o "$ompi_bench" "$here/../../../docs/bench/ompi_bench.c" || exit 1
  fi
  # mpirun runs on host 0; it starts host 1's daemon through this agent
  # ("AGENT HOST COMMAND", as ssh), which enters the namespace of that
  # address. Each host also gets a hostname of its own (a UTS namespace):
  # Open MPI names its shared-memory files by hostname, and the namespaces
  # share /dev/shm, so with one name vader's files of the two hosts collide
  # (a segfault in mca_btl_vader_poll_handle_frag).
  agent=$MH_DIR/ns-agent
  {
    echo '#!/bin/sh'
    echo 'host=$1; shift'
    echo 'case $host in'
    echo "  $(mh_addr 0)) ns=$(mh_ns 0) ;;"
    echo "  $(mh_addr 1)) ns=$(mh_ns 1) ;;"
    echo '  *) echo "ns-agent: unknown host $host" >&2; exit 1 ;;'
    echo 'esac'
    echo 'exec ip netns exec "$ns" unshare --uts sh -c '\''hostname "$0" && exec sh -c "$1"'\'' "$ns" "$*"'
  } >"$agent"
  chmod +x "$agent"
  printf '%s slots=2\n%s slots=2\n' "$(mh_addr 0)" "$(mh_addr 1)" >"$MH_DIR/hostfile"
fi
# --bind-to none as for xcrun (netns.sh: the hosts share the cores).
# yield_when_idle: 4 ranks on 2 cores; busy polling would measure the
# scheduler (xcomm's waits yield and sleep on their own).
ompi_table() {  # BENCH_ARGS...
  run_on 0 unshare --uts sh -c 'hostname "$0" && exec "$@"' "$(mh_ns 0)" \
    timeout 600 mpirun --allow-run-as-root --hostfile "$MH_DIR/hostfile" -np 4 --map-by slot --bind-to none \
    --mca plm_rsh_agent "$agent" --mca pml ob1 --mca btl tcp,self,vader \
    --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --mca mpi_yield_when_idle 1 \
    "$ompi_bench" "$@" 2>&1 | grep -v '^\[.*help message\|orte_base_help_aggregate'
}
for op in ${OPS:-allreduce allgather alltoall}; do
  for range in "${ranges[@]}"; do
    echo "## $op, 2 hosts x 2 ranks: xcomm (xc-bench over xcrun --nnodes 2, UCX_TLS=tcp)"
    # shellcheck disable=SC2086  # the range is words
    xc_table "xc.$op" 2 2 "$op" $range -n "$iters" -w "$warmup" -c 1
    if [ $have_mpi = 1 ]; then
      echo "## $op, 2 hosts x 2 ranks: Open MPI (ompi_bench, btl tcp,self,vader, pml ob1)"
      # shellcheck disable=SC2086
      ompi_table "$op" $range -n "$iters" -w "$warmup" -c 1
    fi
  done
done
mh_finish
