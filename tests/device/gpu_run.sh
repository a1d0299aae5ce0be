#!/usr/bin/env bash
# The device checks on a lent GPU machine, as one call (docs/device-tests.md "The first GPU runs").
#
#   bash tests/device/gpu_run.sh prepare   here: fetch what the GPU machine lacks into .gpu/ (ignored)
#   bash tests/device/gpu_run.sh [SECONDS] there (carry .gpu): build with CUDA, suite device with
#                                          XC_DEVICE=cuda within SECONDS (default 140), device figures
#
# The GPU image has nvcc, meson, ninja, pkg-config and torch but not CMocka (the tests' framework) or
# cffi (the Python bindings'): prepare downloads Debian's libcmocka packages and the cffi wheels for
# the image's Python 3.12. Logs and figures go to $OUT when set (the device tool brings them back).
set -uo pipefail
cd "$(dirname "$0")/../.."

if [ "${1:-}" = prepare ]; then
  mkdir -p .gpu/whl .git/info
  grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || echo '/.gpu/' >>.git/info/exclude
  (cd .gpu && apt-get download libcmocka0 libcmocka-dev) || exit 1
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d .gpu/whl cffi pycparser || exit 1
  ls .gpu .gpu/whl
  exit 0
fi

budget=${1:-140}
out=${OUT:-/tmp/xcomm-gpu}; mkdir -p "$out"
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
info=$out/info.txt
{ el start; date -u; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader; } >"$info" 2>&1
for f in .gpu/*.deb; do [ -e "$f" ] && dpkg -x "$f" /; done
ldconfig
ls .gpu/whl/*.whl >/dev/null 2>&1 &&
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .gpu/whl/*.whl >>"$info" 2>&1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} PATH=/usr/local/cuda/bin:$PATH

meson setup build-gpu -Dcuda=enabled -Dhwloc=disabled -Ducx=disabled >"$out/build.log" 2>&1 &&
  timeout 150 ninja -C build-gpu >>"$out/build.log" 2>&1
rc=$?; el "build rc=$rc" >>"$info"
if [ $rc -ne 0 ]; then grep -m 20 -B2 -A6 -i error "$out/build.log"; exit 1; fi

export XC_DEVICE=cuda
timeout "$budget" meson test -C build-gpu --no-rebuild --print-errorlogs --suite device --num-processes 8 \
  >"$out/tests.txt" 2>&1
el "suite device rc=$?" >>"$info"
cp build-gpu/meson-logs/testlog.txt "$out/testlog.txt"

X=build-gpu/src/tools/xcrun B=build-gpu/src/tools/xc-bench
{
  b() { el "xcrun $*"; timeout 40 "$X" "$@"; echo "rc=$?"; }
  b -n 2 "$B" pingpong -m device -b 8 -e 64M -f 16 -n 100
  b -n 2 "$B" allreduce -m device -b 8 -e 64M -f 8 -n 10 -w 2
  b -n 4 "$B" allreduce -m device -b 8 -e 64M -f 8 -n 10 -w 2
  b -n 4 "$B" allgather -m device -b 1K -e 64M -f 8 -n 10 -w 2
  # The intra-node kernels beside the generic path, each forced (docs/device-kernels.md).
  for n in 2 4; do
    for algo in dev_oneshot dev_twoshot dev_generic; do
      XC_ALGO=$algo b -n $n "$B" allreduce -m device -b 8 -e 16M -f 4 -n 20 -w 3
    done
  done
} >"$out/bench.txt" 2>&1
el done >>"$info"
cat "$info"
grep -E '^ *[0-9]+/[0-9]+ ' "$out/tests.txt" | grep -v ' OK \| SKIP ' | head -40
tail -8 "$out/tests.txt"
