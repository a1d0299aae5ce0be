#!/usr/bin/env bash
# run.sh MODE XC_INFO XCRUN N FAKE_LIB PROGRAM ARGS...: one `nccl` suite test.
# The ranks use the emulated device and the fake libnccl (fake_nccl.cc) in
# NCCL's place, exchanging data through a fresh directory in /dev/shm; each
# rank's NCCL calls are logged to $FAKE_NCCL_LOG.<rank> for the program to
# read back. MODE hosts: every rank on a "host" of its own (XC_HOST_ID), so
# communicators span hosts and NCCL carries device memory as it would
# between machines (skipped, 77, in a build without UCX: ranks on different
# hosts could not reach each other). MODE force: one host, XC_NCCL=1.
# MODE algo: one host, XC_ALGO=allreduce=nccl (only that op goes to NCCL).
# MODE kill: one host, XC_NCCL=1, the last rank is killed; survivors checked.
set -euo pipefail
mode=$1 xc_info=$2 xcrun=$3 n=$4 fake=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d /dev/shm/xc-fake-nccl.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export XC_DEVICE=emulated XC_NCCL_LIBRARY=$fake FAKE_NCCL_DIR=$dir FAKE_NCCL_LOG=$dir/log
export XC_TIMEOUT=${XC_TIMEOUT:-20000}
case $mode in
  hosts)
    if ! "$xc_info" --json | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["build"]["ucx"] else 1)'; then
      echo "skipped: this build has no UCX transport, so ranks on different hosts cannot reach each other"
      exit 77
    fi
    hosts=${NCCL_TEST_HOSTS:-$(seq -s, -f 'h%g' 0 $((n - 1)))}  # one host per rank unless given
    "$xcrun" -n "$n" -x XC_TEST_HOSTS="$hosts" -x UCX_TLS="${UCX_TLS:-tcp}" "$here/../hier/as_host.sh" "$@"
    ;;
  force)
    XC_NCCL=1 "$xcrun" -n "$n" "$@"
    ;;
  algo)
    XC_ALGO=allreduce=nccl "$xcrun" -n "$n" "$@"
    ;;
  kill)
    # The last rank kills itself: xcrun reports it (137) and lets the
    # others finish (--grace); each survivor leaves a file when it passed.
    XC_NCCL=1 "$xcrun" --grace 30 -n "$n" "$@" && { echo "xcrun exited 0, but a rank was killed"; exit 1; }
    survived=$(ls "$dir" | grep -c '^survived\.' || true)
    echo "$survived of $((n - 1)) survivors passed"
    [ "$survived" -eq $((n - 1)) ]
    ;;
  *)
    echo "run.sh: mode is hosts, force, algo or kill, not $mode" >&2
    exit 2
    ;;
esac
