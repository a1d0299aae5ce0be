#!/usr/bin/env bash
# A bad XC_* value fails xc_init on every rank at once, with a message that
# names the variable, the value and what it takes, instead of falling back
# to a default in silence (XC_TIMEOUT=5s used to give 300 s). Each rank
# reports to a file of its own, since xcrun stops the job at the first
# failure.
set -euo pipefail
xcrun=$1 prog=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
expect_fail() {  # VAR=VALUE, then the message every rank must print
  rm -f "$dir"/*
  env "$1" "$xcrun" -n 2 bash -c '"$0" 2 all 2>"$1/err.$XC_RANK"; echo $? >"$1/rc.$XC_RANK"' "$prog" "$dir" ||
    { echo "FAIL: $1: xcrun failed"; exit 1; }
  for r in 0 1; do
    [ "$(cat "$dir/rc.$r")" != 0 ] || { echo "FAIL: $1: rank $r succeeded"; exit 1; }
    grep -qF "$2" "$dir/err.$r" || { echo "FAIL: $1: rank $r did not say '$2':"; cat "$dir/err.$r"; exit 1; }
  done
}
expect_fail XC_TIMEOUT=5s "XC_TIMEOUT='5s' is not valid: it takes a whole number from 1 up"
expect_fail XC_SHM_LARGE=fast "XC_SHM_LARGE='fast' is not valid: it takes one of copy/cma"
expect_fail XC_SHM_RING_BYTES=12q "XC_SHM_RING_BYTES='12q' is not valid: it takes a byte count"
expect_fail XC_SHM_COLL_CMA=yes "XC_SHM_COLL_CMA='yes' is not valid: it takes 0 or 1"
echo "ok: every bad value failed every rank with its name"
