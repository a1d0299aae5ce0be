#!/usr/bin/env bash
# fault_kill.sh XCRUN PROG NRANKS [MODE ARG]   (MODE ARG default: ring exchange)
#
# Runs `xcrun --grace 30 -n NRANKS PROG DIR MODE ARG`, in which the last rank
# dies by SIGKILL, and checks:
#   1. xcrun exits 137 (128 + SIGKILL: the victim's status);
#   2. its stderr names the victim rank and the signal;
#   3. every survivor wrote DIR/rank<r>.ok (detection time, error message)
#      and none wrote DIR/rank<r>.fail;
#   4. no /dev/shm/xcomm-<job>-* file is left, none existed once the ranks had
#      attached (the library unlinks them at once), and xcrun had none to
#      remove;
#   5. the job ended on its own, well before any deadline (20 s per op).
# Every check runs and reports; the exit status is 1 if any failed.
# XC_TEST_SEED (passed on to the ranks) picks the kill point.
set -u
XCRUN=$1
PROG=$2
N=$3
shift 3
if [ $# -eq 0 ]; then set -- ring exchange; fi
victim=$((N - 1))
source "$(dirname "$0")/../common/checks.sh"

echo "xcrun --grace 30 -n $N $PROG $tmp/job $*"
mkdir "$tmp/job"
start=$(now_ms)
# The outer timeout only guards against a hung xcrun (meson's is 60 s).
timeout -s KILL 55 "$XCRUN" --grace 30 -n "$N" "$PROG" "$tmp/job" "$@" </dev/null >"$tmp/out" 2>"$tmp/err"
rc=$?
elapsed=$(($(now_ms) - start))
echo "xcrun exit status $rc after $elapsed ms"
echo "stdout:"
indent <"$tmp/out"
echo "stderr:"
indent <"$tmp/err"

# 1, 2: xcrun's verdict.
[ "$rc" -ne 0 ] || fail "xcrun exited 0 although rank $victim was killed"
[ "$rc" -eq 137 ] || fail "xcrun exited $rc, want 137 (the victim's SIGKILL)"
others=$((N - 1))
if [ "$others" -eq 1 ]; then others_text="1 rank"; else others_text="$others ranks"; fi
grep -Eq "^xcrun: rank $victim \(pid [0-9]+\) was killed by signal 9 \(Killed\); stopping the other $others_text\$" \
  "$tmp/err" || fail "xcrun's stderr does not say that rank $victim was killed by signal 9"
if grep -Eq '^xcrun: rank [0-9]+ .*(exited with status|was killed)' "$tmp/err" &&
  grep -E '^xcrun: rank [0-9]+ .*(exited with status|was killed)' "$tmp/err" | grep -vq "^xcrun: rank $victim "; then
  fail "xcrun reports a failure of a rank other than the victim"
fi

# 3: each survivor's report.
for ((r = 0; r < N - 1; ++r)); do
  if [ -f "$tmp/job/rank$r.fail" ]; then
    fail "rank $r reported a failed check:"
    indent <"$tmp/job/rank$r.fail"
  elif [ -f "$tmp/job/rank$r.ok" ]; then
    echo "rank $r verified:"
    indent <"$tmp/job/rank$r.ok"
    grep -q '^rank=.* code=-6 detect_ms=' "$tmp/job/rank$r.ok" || fail "rank $r's report lacks its detection time"
    grep -q "^message=.*rank $victim\\b" "$tmp/job/rank$r.ok" || fail "rank $r's message does not name rank $victim"
  else
    fail "rank $r (a survivor) wrote no verdict: it was stopped or hung before finishing its checks"
  fi
done
[ ! -e "$tmp/job/rank$victim.ok" ] && [ ! -e "$tmp/job/rank$victim.fail" ] ||
  fail "the victim (rank $victim) wrote a verdict: it did not die where it should"

# 4: shared memory.
job=$(cat "$tmp/job/job_id" 2>/dev/null)
if [ -z "$job" ]; then
  fail "rank 0 did not record XC_JOB_ID"
elif [ -d /dev/shm ]; then
  left=$(find /dev/shm -maxdepth 1 -name "xcomm-$job-*" 2>/dev/null)
  [ -z "$left" ] || fail "shared-memory files of job $job left behind: $left"
  rm -f /dev/shm/xcomm-"$job"-* 2>/dev/null
  during=$(cat "$tmp/job/shm_after_init" 2>/dev/null)
  [ "$during" = 0 ] || fail "$during /dev/shm/xcomm-$job-* names still existed after every rank had attached, want 0"
  ! grep -q 'leftover shared-memory files' "$tmp/err" || fail "xcrun had to remove shared-memory files the library left"
fi

# 5: the survivors finished on their own, not by a deadline or SIGKILL.
[ "$elapsed" -lt 15000 ] || fail "the job took $elapsed ms: something waited for a deadline"

finish
