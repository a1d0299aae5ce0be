#!/usr/bin/env bash
# kernels.sh EXPECT COMMAND...: run a device test (under run.sh) with
# XC_DEBUG=INFO and check from the log which device algorithms its
# collectives took. EXPECT is a comma-separated list of the algorithms that
# must each have run at least once ("dev_oneshot,dev_twoshot"), or "none":
# no intra-node kernel may run (only dev_generic); "in_place" in the list:
# some rank's registered buffer came to be read in place by every peer.
set -u
source "$(dirname "$0")/../common/checks.sh"
expect=$1
shift
XC_DEBUG=INFO XC_DEBUG_FILE="$tmp/log.%p" "$(dirname "$0")/run.sh" "$@"
rc=$?
[ "$rc" -eq 77 ] && exit 77
[ "$rc" -eq 0 ] || fail "the test exited $rc"
taken=$(grep -ho 'of device memory on [0-9]* ranks: dev_[a-z]*' "$tmp"/log.* 2>/dev/null | sed 's/.*: //' | sort | uniq -c)
echo "device algorithms taken (ops x ranks):"
echo "$taken" | indent
if [ "$expect" = none ]; then
  grep -qE 'dev_(oneshot|twoshot|hcm)$' <<<"$taken" && fail "an intra-node kernel ran where none may"
else
  for algo in ${expect//,/ }; do
    if [ "$algo" = in_place ]; then
      grep -q 'registered buffer .* read in place' "$tmp"/log.* || fail "no registered buffer came to be read in place"
    else
      grep -qE " $algo\$" <<<"$taken" || fail "no collective took $algo"
    fi
  done
fi
finish
