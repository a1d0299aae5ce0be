#!/usr/bin/env bash
# gpu_run.sh [BUILD]: the NCCL checks a one-GPU machine allows, with the real
# libnccl.so.2 (CUDA 13 ships it in /usr/local/cuda/lib64) and XC_DEVICE=cuda.
# NCCL refuses two ranks of one communicator on one GPU, so everything runs
# at one rank, NCCL forced on (XC_NCCL=1): every op (data checked against
# host references), splits (split_groups into 4 groups, xc_comm_split),
# lazy creation, abort, the timings of docs/nccl.md (creation at init,
# one split into 4 groups, a P2P child for a new stream), and allreduces
# through NCCL captured into a CUDA graph and replayed (device_capture). Exit 77 when
# there is no GPU or no NCCL. The multi-rank tests need a machine with
# several GPUs: run `meson test --suite nccl` there with XC_DEVICE=cuda
# and XC_NCCL_LIBRARY unset (the fake-only cases then skip their log checks).
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.."
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: no GPU"
  exit 77
fi
[ -f "$build/build.ninja" ] || meson setup "$build" || exit 1
ninja -C "$build" src/tools/xcrun tests/nccl/nccl_test tests/device/device_capture || exit 1
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export XC_DEVICE=cuda XC_NCCL=1 XC_TIMEOUT=${XC_TIMEOUT:-60000} XC_DEBUG=${XC_DEBUG:-INFO}
unset XC_NCCL_LIBRARY FAKE_NCCL_LOG FAKE_NCCL_DIR
fail=0
for c in ops splits lazy abort timing; do
  echo "== nccl_test $c (1 rank, real NCCL)"
  timeout 300 "$build/src/tools/xcrun" -n 1 "$build/tests/nccl/nccl_test" "$c" 2>&1 | tail -20
  rc=${PIPESTATUS[0]}
  echo "== $c: exit $rc"
  [ "$rc" = 0 ] || [ "$rc" = 77 ] || fail=1
done
echo "== device_capture (1 rank, real NCCL)"
timeout 300 "$build/src/tools/xcrun" -n 1 "$build/tests/device/device_capture" 2>&1 | tail -20
rc=${PIPESTATUS[0]}
echo "== capture: exit $rc"
[ "$rc" = 0 ] || [ "$rc" = 77 ] || fail=1
exit $fail
