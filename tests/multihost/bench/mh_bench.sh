#!/usr/bin/env bash
# mh_bench.sh p2p|coll [BUILD_DIR]   (as root, from the repository root)
#
# Measurements between network namespaces (tests/multihost/netns.sh: each
# namespace a "host", joined by a bridge, TCP between them), printing each
# side's own table; docs/benchmarks.md ("Across hosts") says how to read them.
#
#   p2p   two hosts, one process each: ucx_perftest (server on host 0,
#         client on host 1, UCX_TLS=tcp) tag_lat and tag_bw at 8 B, 1 MiB,
#         16 MiB and 64 MiB, and tag_bw both ways at once (4 and 64 MiB:
#         the floor of an exchange between the hosts) and plain TCP both
#         ways (tcp_exchange.py: the kernel's floor), beside xc-bench
#         pingpong over xcrun --nnodes 2 at 8 B and 1 MiB to 64 MiB.
#   coll  two hosts x two ranks: xc-bench allreduce, allgather, alltoall from
#         8 B to 64 MiB beside Open MPI's twin, docs/bench/ompi_bench.c
#         (the program docs/bench/compare.sh uses; built here with mpicc into
#         BUILD_DIR/ompi_bench when missing), under mpirun on the same two
#         namespaces: btl tcp,self,vader, pml ob1.
#
# Environment: ITERS and ITERS_LARGE (timed calls per row of the
# collectives, 8 B to 256 KiB and 1 to 64 MiB; default 20 and 5: 64 MiB
# moves slowly over the veths), WARMUP (untimed calls, default 2), REPEAT
# (runs of the whole set, xcomm and Open MPI in turn; default 1), OPS
# (default "allreduce allgather alltoall").
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

# Every "host" is this machine: each gets cores of its own (host h runs on
# cpu h mod the cpus here), as real hosts would, instead of all hosts'
# ranks sharing every core. Each host's xcrun then tells its ranks how
# many cpus they share (XC_LOCAL_CORES), so two ranks on one cpu yield to
# each other as Open MPI's ranks do (mpi_yield_when_idle below).
ncpu=$(nproc)
run_on() {
  local h=$1
  shift
  ip netns exec "$(mh_ns "$h")" taskset -c $((h % ncpu)) "$@"
}

# xc-bench on the job's host 0 (rank 0 prints), without xcrun's "[0] " tag.
xc_table() {  # NAME H R BENCH_ARGS...
  local name=$1 hosts=$2 ranks=$3
  shift 3
  mh_job "$name" "$hosts" "$ranks" --timeout 600 -- "$MH_XC_BENCH" "$@"
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

# Both directions at once (what an exchange between two hosts needs): a
# tag_bw pair each way, started together; prints each client's row.
perftest_both() {  # SIZE ITERS
  local p0 p1 h deadline
  p0=$(mh_port)
  p1=$((p0 + 1))
  run_on 0 env "${UCX_ENV[@]}" timeout 300 ucx_perftest -p "$p0" -t tag_bw -s "$1" -n "$2" >"$MH_DIR/both.srv0" 2>&1 &
  run_on 1 env "${UCX_ENV[@]}" timeout 300 ucx_perftest -p "$p1" -t tag_bw -s "$1" -n "$2" >"$MH_DIR/both.srv1" 2>&1 &
  deadline=$((SECONDS + 10))
  until run_on 0 ss -Hltn "sport = :$p0" | grep -q . && run_on 1 ss -Hltn "sport = :$p1" | grep -q .; do
    [ $SECONDS -lt $deadline ] || { echo "ucx_perftest servers did not listen"; return 1; }
    sleep 0.05
  done
  run_on 1 env "${UCX_ENV[@]}" timeout 300 ucx_perftest "$(mh_addr 0)" -p "$p0" -t tag_bw -s "$1" -n "$2" \
    >"$MH_DIR/both.cli1" 2>&1 &
  run_on 0 env "${UCX_ENV[@]}" timeout 300 ucx_perftest "$(mh_addr 1)" -p "$p1" -t tag_bw -s "$1" -n "$2" \
    >"$MH_DIR/both.cli0" 2>&1
  wait
  for h in 1 0; do
    awk -v s="$1" -v h="$h" '/^Final:/ { printf "| both, from host %s | %9s | %6s | %10s | %10s | %10s |\n", h, s, $2, $3, $4, $7 }' \
      "$MH_DIR/both.cli$h"
  done
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
    perftest_both 4194304 100
    perftest_both 67108864 10
  fi
  echo
  echo "## plain TCP both ways at once, one connection (tcp_exchange.py), host 0 <-> host 1"
  for spec in "4194304 20" "67108864 10"; do
    read -r size iters <<<"$spec"
    port=$(mh_port)
    run_on 0 timeout 300 python3 "$here/tcp_exchange.py" server "$(mh_addr 0)" "$port" "$size" "$iters" &
    run_on 1 timeout 300 python3 "$here/tcp_exchange.py" client "$(mh_addr 0)" "$port" "$size" "$iters"
    wait
  done
  echo
  echo "## xc-bench pingpong, host 0 <-> host 1 (xcrun --nnodes 2 -n 1, UCX_TLS=tcp)"
  xc_table pp_small 2 1 pingpong -b 8 -e 8 -n 10000 -w 100
  xc_table pp_large 2 1 pingpong -b 1M -e 64M -f 4 -n 10 -w 2
  mh_finish
fi

# coll
mh_hosts 2
warmup=${WARMUP:-2}
ranges=("-b 8 -e 1M -f 8" "-b 1M -e 64M -f 8")  # 8 B .. 256 KiB, then 1, 8, 64 MiB
iters=("${ITERS:-20}" "${ITERS_LARGE:-5}")       # timed calls a row, per range
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
    echo "cpu=\$(( \${ns##*h} % $ncpu ))  # as run_on"
    echo 'exec ip netns exec "$ns" taskset -c $cpu unshare --uts sh -c '\''hostname "$0" && exec sh -c "$1"'\'' "$ns" "$*"'
  } >"$agent"
  chmod +x "$agent"
  printf '%s slots=2\n%s slots=2\n' "$(mh_addr 0)" "$(mh_addr 1)" >"$MH_DIR/hostfile"
fi
# --bind-to none as for xcrun (each host's processes stay on its cpu).
# yield_when_idle: 2 ranks share a host's cpu; busy polling would measure
# the scheduler (xcomm's ranks yield to each other on their own).
ompi_table() {  # BENCH_ARGS...
  run_on 0 unshare --uts sh -c 'hostname "$0" && exec "$@"' "$(mh_ns 0)" \
    timeout 600 mpirun --allow-run-as-root --hostfile "$MH_DIR/hostfile" -np 4 --map-by slot --bind-to none \
    --mca plm_rsh_agent "$agent" --mca pml ob1 --mca btl tcp,self,vader \
    --mca btl_tcp_if_include eth0 --mca oob_tcp_if_include eth0 --mca mpi_yield_when_idle 1 \
    "$ompi_bench" "$@" 2>&1 | grep -v '^\[.*help message\|orte_base_help_aggregate'
}
for ((rep = 1; rep <= ${REPEAT:-1}; ++rep)); do
  for op in ${OPS:-allreduce allgather alltoall}; do
    for i in 0 1; do
      range=${ranges[$i]} n=${iters[$i]}
      echo "## $op, 2 hosts x 2 ranks: xcomm (xc-bench over xcrun --nnodes 2, UCX_TLS=tcp), run $rep"
      # shellcheck disable=SC2086  # the range is words
      xc_table "xc.$op" 2 2 "$op" $range -n "$n" -w "$warmup" -c 1
      if [ $have_mpi = 1 ]; then
        echo "## $op, 2 hosts x 2 ranks: Open MPI (ompi_bench, btl tcp,self,vader, pml ob1), run $rep"
        # shellcheck disable=SC2086
        ompi_table "$op" $range -n "$n" -w "$warmup" -c 1
      fi
    done
  done
done
mh_finish
