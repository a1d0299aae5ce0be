#!/usr/bin/env bash
# bench_comm.sh [BUILD_DIR] [-- XC_BENCH_COMM_ARGS...]
#
# Runs `xcrun -n N BUILD_DIR/src/tools/xc-bench comm` for N = 2 3 4 5 6 8 12 16
# (override with RANKS="2 4 8") and prints one markdown table: the world's
# start-up time (xc_init, slowest rank) and the min/avg/max of xc_comm_split
# and xc_comm_split_groups into 4 groups, all in microseconds. It builds
# nothing: build first (ninja -C BUILD_DIR). Arguments after -- go to
# `xc-bench comm` (e.g. -- -r 50).
set -euo pipefail
build=${1:-build}
shift $(($# > 0 ? 1 : 0))
[ "${1:-}" = "--" ] && shift
ranks=${RANKS:-2 3 4 5 6 8 12 16}
xcrun=$build/src/tools/xcrun
bench=$build/src/tools/xc-bench
for f in "$xcrun" "$bench"; do
  [ -x "$f" ] || { echo "bench_comm.sh: $f is missing; build first (ninja -C $build)" >&2; exit 1; }
done

echo "| ranks | init µs | split µs (min/avg/max) | split_groups µs (min/avg/max) |"
echo "| ---: | ---: | ---: | ---: |"
for n in $ranks; do
  out=$("$xcrun" -n "$n" "$bench" comm "$@") || { echo "bench_comm.sh: the run with $n ranks failed" >&2; exit 1; }
  awk -v n="$n" '
    $1 == "init"         { init = sprintf("%.0f", $7) }
    $1 == "split"        { split_t = sprintf("%.1f / %.1f / %.1f", $5, $6, $7) }
    $1 == "split_groups" { groups_t = sprintf("%.1f / %.1f / %.1f", $5, $6, $7) }
    END {
      if (init == "" || split_t == "" || groups_t == "") { print "bench_comm.sh: no result lines for " n " ranks" > "/dev/stderr"; exit 1 }
      printf "| %d | %s | %s | %s |\n", n, init, split_t, groups_t
    }' <<<"$out"
done
