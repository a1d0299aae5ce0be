#!/usr/bin/env bash
# xc-bench -m device: its result check at N ranks, on the emulated device by
# default and unchanged on a GPU (XC_DEVICE=cuda). Passes only when the run
# exits 0, says it ran on device memory of the kind asked for, and reports
# no wrong result (collectives: "Out of bounds values : 0 OK"; pingpong: a
# #wrong column of zeros). Asked for a real device where xc-bench cannot
# reach one (no CUDA runtime or device, or a library whose xc_stream_create
# or xc_mem_alloc_device answers XC_ERR_UNSUPPORTED): exit 77, meson's
# "skipped", with xc-bench's reason in the log.
#   xc_bench_device.sh XCRUN XC_BENCH NRANKS SUBCOMMAND [OPTIONS...]
set -uo pipefail
xcrun=$1 xc_bench=$2 nranks=$3 sub=$4
shift 4
export XC_DEVICE=${XC_DEVICE:-emulated}
fail() { echo "FAIL: $*"; exit 1; }

out=$("$xcrun" -n "$nranks" "$xc_bench" "$sub" -m device "$@" 2>&1)
rc=$?
echo "$out"
if [[ $rc -ne 0 && ${XC_DEVICE,,} != emulated ]] &&
   grep -qE -- '-m device: |(xc_stream_create|xc_mem_alloc_device)\(.*failed: unsupported' <<<"$out"; then
  echo "SKIP: no device xc-bench can use with XC_DEVICE=$XC_DEVICE (see above)"
  exit 77
fi
[[ $rc -eq 0 ]] || fail "xcrun -n $nranks xc-bench $sub -m device $* exited $rc"
kind=$([[ ${XC_DEVICE,,} == emulated ]] && echo emulated || echo cuda)
grep -q "^# Memory: device ($kind)\$" <<<"$out" || fail "no '# Memory: device ($kind)' line"
grep -q '^# Device floors: ' <<<"$out" || fail "no '# Device floors:' line"
if [[ $sub == pingpong ]]; then
  rows=$(grep -cE '^ +[0-9]+ ' <<<"$out")
  [[ $rows -gt 0 ]] || fail "no pingpong rows"
  awk '/^ +[0-9]+ / && $5 != 0 { bad = 1 } END { exit bad }' <<<"$out" || fail "a pingpong row has #wrong > 0"
else
  grep -q '^# Out of bounds values : 0 OK$' <<<"$out" || fail "wrong results (see the #wrong columns)"
fi
echo "PASS: $sub at $nranks ranks on device memory ($kind)"
