#!/usr/bin/env bash
# device_fault.sh XCRUN PROG NRANKS
#
# Runs `xcrun --grace 30 -n NRANKS PROG DIR kill`, in which the last rank
# SIGKILLs itself with device allreduces in flight on the others
# (device_fault.c), and checks:
#   1. xcrun exits 137 (128 + SIGKILL: the victim's status);
#   2. every survivor wrote DIR/rank<r>.ok (its error, when it came, the
#      message) and none wrote DIR/rank<r>.fail;
#   3. no /dev/shm name of the job is left behind;
#   4. the job ended on its own, well before any outer deadline.
# The exit status is 1 if any check failed, 77 if the ranks skipped (no GPU).
set -u
XCRUN=$1
PROG=$2
N=$3
victim=$((N - 1))
source "$(dirname "$0")/../common/checks.sh"

echo "XC_DEVICE=${XC_DEVICE:-} xcrun --grace 30 -n $N $PROG $tmp/job kill"
mkdir "$tmp/job"
start=$(now_ms)
timeout -s KILL 100 "$XCRUN" --grace 30 -n "$N" "$PROG" "$tmp/job" kill </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
elapsed=$(($(now_ms) - start))
echo "xcrun exit status $rc after $elapsed ms"
echo "stdout:"
indent <"$tmp/out"
echo "stderr:"
indent <"$tmp/err"
if [ "$rc" -eq 77 ]; then
  echo "skipped"
  exit 77
fi

[ "$rc" -eq 137 ] || fail "xcrun exited $rc, want 137 (the victim's SIGKILL)"
grep -Eq "^xcrun: rank $victim \(pid [0-9]+\) was killed by signal 9" "$tmp/err" ||
  fail "xcrun's stderr does not say that rank $victim was killed by signal 9"
for ((r = 0; r < N - 1; ++r)); do
  if [ -f "$tmp/job/rank$r.fail" ]; then
    fail "rank $r reported a failed check:"
    indent <"$tmp/job/rank$r.fail"
  elif [ -f "$tmp/job/rank$r.ok" ]; then
    echo "rank $r verified:"
    indent <"$tmp/job/rank$r.ok"
  else
    fail "rank $r (a survivor) wrote no verdict: it was stopped or hung before finishing its checks"
  fi
done
job=$(cat "$tmp/job/job_id" 2>/dev/null)
if [ -n "$job" ] && [ -d /dev/shm ]; then
  left=$(find /dev/shm -maxdepth 1 -name "*$job*" 2>/dev/null)
  [ -z "$left" ] || fail "shared-memory names of job $job left behind: $left"
  rm -f /dev/shm/*"$job"* 2>/dev/null
fi
[ "$elapsed" -lt 40000 ] || fail "the job took $elapsed ms"

finish
