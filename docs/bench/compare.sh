#!/usr/bin/env bash
# compare.sh [BUILD_DIR] [-- BENCH_ARGS...]
#
# xcomm against Open MPI on this machine, one collective at a time, with the
# same parameters: for each OP in $OPS and each N in $RANKS it runs
#
#   BUILD_DIR/src/tools/xcrun -n N BUILD_DIR/src/tools/xc-bench OP BENCH_ARGS
#   mpirun --allow-run-as-root --oversubscribe -np N ompi_bench OP BENCH_ARGS
#
# one after the other and prints a markdown table per op, rank count and
# placement (out-of-place, in-place): size | xcomm time µs | OMPI time µs |
# xcomm busbw | OMPI busbw | ratio, where ratio = OMPI time / xcomm time
# (= xcomm busbw / OMPI busbw; above 1: xcomm is faster). Barrier: time only.
# At the end one summary table has a line per op, rank count and placement:
# the ratio at the smallest and the largest size, the geometric mean of the
# ratios over all sizes, and the best busbw of each library.
# ompi_bench (docs/bench/ompi_bench.c) is xc-bench's MPI twin: same sizes,
# iteration scheme, check, columns and busbw formulas, for every collective.
#
#   OPS     collectives (default: all sixteen: allreduce broadcast reduce
#           allgather allgatherv gather gatherv scatter scatterv reduce_scatter
#           reduce_scatterv alltoall alltoallv scan exscan barrier)
#   RANKS   rank counts (default: 2 4)
#   REPEAT  runs of each pair (default 1), alternating xcomm and Open MPI so
#           that load from elsewhere hits both alike; each table cell is then
#           the run with the median time for that row (busbw of that run)
#   OUT     where the raw outputs go (default: a new directory under /tmp)
#   NO_MPI  1: run the xcomm side only, as when Open MPI is absent
#   BUSY    1: a noisy neighbour: one process spinning on cpu 0 for the whole
#           run (both libraries alike), as another job on the machine would;
#           the summary's first line says so
#   BENCH_ARGS default: -b 8 -e 64M -f 2 -n 20 -w 5 -c 1 (every power of two
#           from 8 B to 64 MiB; -f 4 or 8 from 8 B stops short of 64 MiB, as
#           nccl-tests does: the last row is the last size <= -e). A root
#           (-r) applies to the rooted ops; the others ignore it. -H 1 puts
#           both sides' buffers on 2 MiB pages (xc_mem_alloc; ompi_bench
#           maps the same kind with madvise).
#
# It builds nothing of xcomm (ninja -C BUILD_DIR first). ompi_bench is built
# with mpicc into BUILD_DIR/ompi_bench when Open MPI is installed; without
# it the script says so (and how to install it) and runs the xcomm side
# alone, the Open MPI columns left as "-". Nothing in the test suite or CI
# runs this script or needs Open MPI.
set -euo pipefail
build=${1:-build}
shift $(($# > 0 ? 1 : 0))
[ "${1:-}" = "--" ] && shift
if [ $# -gt 0 ]; then args=("$@"); else args=(-b 8 -e 64M -f 2 -n 20 -w 5 -c 1); fi
ops=${OPS:-allreduce broadcast reduce allgather allgatherv gather gatherv scatter scatterv reduce_scatter reduce_scatterv alltoall alltoallv scan exscan barrier}
ranks=${RANKS:-2 4}
repeat=${REPEAT:-1}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
xcrun=$build/src/tools/xcrun
bench=$build/src/tools/xc-bench
for f in "$xcrun" "$bench"; do
  [ -x "$f" ] || { echo "compare.sh: $f is missing; build first (ninja -C $build)" >&2; exit 1; }
done

have_mpi=1
if [ "${NO_MPI:-0}" = 1 ]; then
  have_mpi=0
  echo "compare.sh: NO_MPI=1: running the xcomm side only." >&2
elif ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
  have_mpi=0
  echo "compare.sh: Open MPI is not installed (no mpicc/mpirun on PATH): running the xcomm side only." >&2
  echo "  For the comparison, on Debian or Ubuntu: apt-get install openmpi-bin libopenmpi-dev" >&2
else
  mpirun --version 2>&1 | grep -q "Open MPI" ||
    echo "compare.sh: warning: mpirun is not Open MPI's; the flags below are Open MPI's" >&2
  ompi_bench=$build/ompi_bench
  if [ ! -x "$ompi_bench" ] || [ "$here/ompi_bench.c" -nt "$ompi_bench" ]; then
    mpicc -O2 -std=c99 -Wall -o "$ompi_bench" "$here/ompi_bench.c"
  fi
fi

out=${OUT:-$(mktemp -d /tmp/xc-compare.XXXXXX)}
mkdir -p "$out"
summary=$out/summary.md
: >"$summary"
echo "<!-- compare.sh: raw outputs in $out; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" \
  "before the runs; REPEAT=$repeat; parameters: ${args[*]}$([ $have_mpi = 1 ] || echo '; Open MPI absent')" \
  "$([ "${BUSY:-0}" = 1 ] && echo '; BUSY=1: a process spins on cpu 0 throughout') -->"
if [ "${BUSY:-0}" = 1 ]; then
  taskset -c 0 sh -c 'while :; do :; done' &
  busy_pid=$!
  trap 'kill $busy_pid 2>/dev/null' EXIT
fi

# A run's exit status 1 with a complete table means #wrong > 0: tabulate it anyway.
run_one() {  # run_one OUTFILE WHAT COMMAND...
  local f=$1 what=$2
  shift 2
  "$@" >"$f" || { [ $? -eq 1 ] && grep -q "Out of bounds" "$f"; } ||
    { echo "compare.sh: $what failed (output in $f)" >&2; exit 1; }
}

for op in $ops; do
  for n in $ranks; do
    files=()
    for ((rep = 1; rep <= repeat; rep++)); do
      xf=$out/xcomm-$op-$n-$rep.txt
      run_one "$xf" "xc-bench $op -n $n" "$xcrun" -n "$n" "$bench" "$op" "${args[@]}"
      files+=("$xf")
      if [ $have_mpi = 1 ]; then
        of=$out/ompi-$op-$n-$rep.txt
        run_one "$of" "ompi_bench $op -np $n" \
          mpirun --allow-run-as-root --oversubscribe -np "$n" "$ompi_bench" "$op" "${args[@]}"
        files+=("$of")
      fi
    done
    # Rows: size count type redop root | time algbw busbw #wrong | time algbw busbw #wrong
    awk -v op="$op" -v n="$n" -v have_mpi="$have_mpi" -v summary="$summary" '
      function row(line, a) { return split(line, a) == 13 && a[1] ~ /^[0-9]+$/ }
      # The row of the run with the median time (the lower one of two middles).
      function median(lib, k, p,    m, i, j, t, idx) {
        m = cnt[lib, k, p]
        for (i = 1; i <= m; i++) idx[i] = i
        for (i = 2; i <= m; i++)
          for (j = i; j > 1 && T[lib, k, p, idx[j - 1]] + 0 > T[lib, k, p, idx[j]] + 0; j--) { t = idx[j]; idx[j] = idx[j - 1]; idx[j - 1] = t }
        return idx[int((m + 1) / 2)]
      }
      FNR == 1 { lib = FILENAME ~ /\/ompi-[^\/]*$/ ? "o" : "x" }
      /Avg bus bandwidth/ { avg[lib] = avg[lib] (avg[lib] == "" ? "" : ", ") $NF; next }
      row($0, f) {
        k = f[3] " " f[4] " " f[1]
        group = f[3] " " f[4]
        if (lib == "x" && !(k in seen_key)) {
          seen_key[k] = 1
          if (!(group in seen)) { seen[group] = 1; groups[++ngroups] = group }
          keys[group, ++nkeys[group]] = k
          size[k] = f[1]
        }
        for (p = 0; p < 2; p++) {
          t = 6 + 4 * p
          if (f[t] == "N/A") continue
          c = ++cnt[lib, k, p]
          T[lib, k, p, c] = f[t]; B[lib, k, p, c] = f[t + 2]
          if (f[t + 3] != "0" && f[t + 3] != "N/A") wrong[group, p] = wrong[group, p] " " (lib == "x" ? "xcomm" : "ompi") "@" f[1]
        }
      }
      END {
        for (i = 1; i <= ngroups; i++) for (p = 0; p < 2; p++) {
          g = groups[i]
          nrows = 0; logsum = 0; nratio = 0; first = "-"; last = "-"; xbest = 0; obest = 0
          for (r = 1; r <= nkeys[g]; r++) {
            k = keys[g, r]
            if (!cnt["x", k, p] || (have_mpi && !cnt["o", k, p])) continue
            if (!nrows++) {
              split(g, tr, " ")
              title = op ", " n " ranks"
              if (tr[1] != "none") title = title ", " tr[1]
              if (tr[2] != "none") title = title " " tr[2]
              if (op != "barrier") title = title ", " (p ? "in-place" : "out-of-place")
              printf "\n### %s\n\n", title
              print "| size (B) | xcomm time µs | OMPI time µs | xcomm busbw GB/s | OMPI busbw GB/s | ratio |"
              print "| ---: | ---: | ---: | ---: | ---: | ---: |"
            }
            xm = median("x", k, p); xt = T["x", k, p, xm]; xb = B["x", k, p, xm]
            ot = "-"; ob = "-"; ratio = "-"
            if (have_mpi) {
              om = median("o", k, p); ot = T["o", k, p, om]; ob = B["o", k, p, om]
              if (xt + 0 > 0) {
                ratio = sprintf("%.2f", ot / xt)
                logsum += log(ot / xt); nratio++
                if (first == "-") first = ratio
                last = ratio
              }
              if (ob != "N/A" && ob + 0 > obest) obest = ob + 0
            }
            if (xb != "N/A" && xb + 0 > xbest) xbest = xb + 0
            printf "| %s | %s | %s | %s | %s | %s |\n", size[k], xt, ot, xb, ob, ratio
          }
          if (wrong[g, p] != "") printf "\n**#wrong > 0:**%s\n", wrong[g, p]
          if (nrows) {
            split(g, tr, " ")
            printf "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", op, n,
              tr[1] == "none" ? "-" : tr[1] (tr[2] != "none" ? " " tr[2] : ""),
              op == "barrier" ? "-" : (p ? "in-place" : "out-of-place"), first, last,
              nratio ? sprintf("%.2f", exp(logsum / nratio)) : "-", op == "barrier" ? "-" : xbest,
              (op == "barrier" || !have_mpi) ? "-" : obest >> summary
          }
        }
        if (op != "barrier")
          printf "\nAvg bus bandwidth (all rows, both placements; per run): xcomm %s GB/s; Open MPI %s GB/s\n", avg["x"], have_mpi ? avg["o"] : "-"
      }' "${files[@]}"
  done
done

echo
echo "### Summary: ratio = Open MPI time / xcomm time (above 1: xcomm is faster)"
echo
echo "| op | ranks | type | placement | ratio, smallest size | ratio, largest size | ratio, geometric mean | xcomm best busbw GB/s | OMPI best busbw GB/s |"
echo "| --- | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: |"
cat "$summary"
