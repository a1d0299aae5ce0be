#!/bin/sh
# kill.sh MULTIHOST XC_INFO XCRUN HOSTS ALGO PROGRAM COUNT: runs hier_kill over
# the hosts with XC_ALGO=ALGO; passes when the victim's SIGKILL is the job's
# verdict (137) and every other rank printed its prompt failure.
set -u
multihost=$1 xc_info=$2 xcrun=$3 hosts=$4 algo=$5 prog=$6 count=$7
n=$(echo "$hosts" | tr ',' '\n' | wc -l)
out=$(XC_TIMEOUT=20000 "$multihost" "$xc_info" "$xcrun" "$hosts" -x XC_ALGO="$algo" -- "$prog" "$count" 2>&1)
rc=$?
echo "$out"
[ "$rc" = 77 ] && exit 77
[ "$rc" = 137 ] || { echo "FAIL: job exit $rc, expected 137 (the victim's SIGKILL)"; exit 1; }
got=$(echo "$out" | grep -c '^survivor')
[ "$got" = $((n - 1)) ] || { echo "FAIL: $got of $((n - 1)) survivors reported a prompt failure"; exit 1; }
echo "ok: $got survivors failed promptly"
