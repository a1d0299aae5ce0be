#!/usr/bin/env bash
# trace.sh behind XCRUN PROG XC_TRACE
#   `xcrun -n 3 PROG behind DIR` with XC_TRACE_DIR set and XC_TIMEOUT=2000:
#   ranks 0 and 1 time out in a 6th allreduce that rank 2 never enters (it
#   sleeps, then dumps on SIGUSR2); every rank checks its own dumps (trace.c).
#   Then xc-trace on XC_TRACE_DIR must exit 0 and say that rank 2 is behind
#   and never entered the op that ranks 0 and 1 failed, by the number their
#   dumps give it; and xc-trace on a missing or malformed file must exit 1.
# trace.sh kill XCRUN PROG XC_TRACE
#   `xcrun --keep-going -n 3 PROG kill` with XC_TRACE_DIR set: rank 2 is
#   SIGKILLed before the 6th allreduce; ranks 0 and 1 fail it with
#   XC_ERR_PEER_FAILED and dump (trace.c checks). xc-trace must exit 0, show
#   op #N failed on ranks 0 and 1 and say that rank 2 left no dump.
# trace.sh depth XCRUN PROG
#   `xcrun -n 2 PROG depth WANT FILE` with XC_TRACE_DEPTH 3 (3 entries kept
#   of 5), 0 (none) and unset (all 5), XC_TRACE_DIR unset.
set -u
MODE=$1
XCRUN=$2
PROG=$3
XC_TRACE_BIN=${4:-}
source "$(dirname "$0")/../common/checks.sh"

case "$MODE" in
behind)
  mkdir "$tmp/trace" "$tmp/explicit"
  XC_TRACE_DIR="$tmp/trace" XC_TIMEOUT=2000 timeout -s KILL 60 "$XCRUN" -n 3 "$PROG" behind "$tmp/explicit" \
    </dev/null >"$tmp/out" 2>&1
  rc=$?
  echo "xcrun exited $rc:"
  indent <"$tmp/out"
  [ "$rc" -eq 0 ] || fail "the job exited $rc"
  echo "dumps:"
  ls "$tmp/trace" | indent
  for r in 0 1 2; do
    n=$(ls "$tmp/trace" | grep -c "^xcomm-trace\..*\.world\.r$r\.jsonl$")
    [ "$n" -eq 1 ] || fail "$n dumps of rank $r in XC_TRACE_DIR, want 1"
  done
  ! ls "$tmp/trace" | grep -q 'tmp' || fail "a temporary file was left in XC_TRACE_DIR"
  # The 6th allreduce's number, as rank 0's dump gives it: its last entry, failed.
  last=$(tail -n 1 "$tmp/trace"/xcomm-trace.*.world.r0.jsonl)
  seq=$(sed -n 's/^{"seq":\([0-9]*\),.*/\1/p' <<<"$last")
  [ -n "$seq" ] || fail "no sequence number in rank 0's last entry: $last"
  grep -q '"state":"failed"' <<<"$last" || fail "rank 0's last entry is not failed: $last"
  "$XC_TRACE_BIN" "$tmp/trace" >"$tmp/verdict" 2>&1
  rc=$?
  echo "xc-trace exited $rc:"
  indent <"$tmp/verdict"
  [ "$rc" -eq 0 ] || fail "xc-trace exited $rc, want 0"
  grep -q "^comm 'world': rank 2 is behind: it never entered op #$seq (allreduce) that ranks 0, 1 failed: " \
    "$tmp/verdict" || fail "the verdict does not name rank 2 as behind op #$seq"
  grep -q "^  rank 2: op #$((seq - 1)) (allreduce) done, " "$tmp/verdict" ||
    fail "rank 2's line does not show op #$((seq - 1)) done"
  grep -q "^  rank 0: op #$seq (allreduce) failed, .*status -5: .*timed out" "$tmp/verdict" ||
    fail "rank 0's line does not show op #$seq failed with a timeout"
  # The explicit dumps are dumps too: every rank at op #seq-1, all idle.
  "$XC_TRACE_BIN" "$tmp/explicit"/r0.jsonl "$tmp/explicit"/r1.jsonl "$tmp/explicit"/r2.jsonl >"$tmp/verdict2" 2>&1
  rc=$?
  indent <"$tmp/verdict2"
  [ "$rc" -eq 0 ] || fail "xc-trace on the explicit dumps exited $rc"
  grep -q "^comm 'world': all ranks idle at op #$((seq - 1)) (allreduce)$" "$tmp/verdict2" ||
    fail "xc-trace on the explicit dumps does not say all ranks are idle at op #$((seq - 1))"
  # Unreadable input: exit 1 with a message.
  "$XC_TRACE_BIN" "$tmp/none.jsonl" >"$tmp/v3" 2>&1
  rc=$?
  [ "$rc" -eq 1 ] && grep -q "none.jsonl" "$tmp/v3" || fail "xc-trace on a missing file exited $rc: $(cat "$tmp/v3")"
  echo "not a dump" >"$tmp/bad.jsonl"
  "$XC_TRACE_BIN" "$tmp/bad.jsonl" >"$tmp/v4" 2>&1
  rc=$?
  [ "$rc" -eq 1 ] && grep -q "not a flight recorder header" "$tmp/v4" ||
    fail "xc-trace on a malformed file exited $rc: $(cat "$tmp/v4")"
  ;;
kill)
  mkdir "$tmp/trace"
  XC_TRACE_DIR="$tmp/trace" timeout -s KILL 60 "$XCRUN" --keep-going -n 3 "$PROG" kill </dev/null >"$tmp/out" 2>&1
  rc=$?
  echo "xcrun exited $rc:"
  indent <"$tmp/out"
  [ "$rc" -eq 137 ] || fail "the job exited $rc, want 137 (rank 2's SIGKILL)"
  grep -q '^xcrun: rank 2 (pid [0-9]*) was killed by signal 9' "$tmp/out" || fail "xcrun does not name rank 2's SIGKILL"
  for r in 0 1; do
    grep -q "^rank $r: " "$tmp/out" || fail "rank $r did not pass its checks"
  done
  [ -z "$(ls "$tmp/trace" | grep '\.r2\.jsonl$')" ] || fail "a dump of the killed rank"
  last=$(tail -n 1 "$tmp/trace"/xcomm-trace.*.world.r0.jsonl)
  seq=$(sed -n 's/^{"seq":\([0-9]*\),.*/\1/p' <<<"$last")
  "$XC_TRACE_BIN" "$tmp/trace" >"$tmp/verdict" 2>&1
  rc=$?
  echo "xc-trace exited $rc:"
  indent <"$tmp/verdict"
  [ "$rc" -eq 0 ] || fail "xc-trace exited $rc, want 0"
  grep -q "^  rank 0: op #$seq (allreduce) failed, .*status -6: " "$tmp/verdict" ||
    fail "rank 0's line does not show op #$seq failed with XC_ERR_PEER_FAILED"
  grep -q "^  rank 2 left no dump$" "$tmp/verdict" || fail "xc-trace does not say rank 2 left no dump"
  grep -q "^comm 'world': every rank that left a dump entered op #$seq (allreduce); rank [01] failed it first: .*; rank 2 left no dump$" \
    "$tmp/verdict" || fail "the verdict does not say every rank that left a dump failed op #$seq"
  ;;
depth)
  for d in 3 0 unset; do
    want=$d
    [ "$d" = unset ] && want=5
    if [ "$d" = unset ]; then
      env -u XC_TRACE_DEPTH -u XC_TRACE_DIR timeout -s KILL 60 "$XCRUN" -n 2 "$PROG" depth "$want" "$tmp/d$d" \
        </dev/null >"$tmp/out" 2>&1
    else
      env -u XC_TRACE_DIR XC_TRACE_DEPTH=$d timeout -s KILL 60 "$XCRUN" -n 2 "$PROG" depth "$want" "$tmp/d$d" \
        </dev/null >"$tmp/out" 2>&1
    fi
    rc=$?
    echo "XC_TRACE_DEPTH=$d: xcrun exited $rc"
    indent <"$tmp/out"
    [ "$rc" -eq 0 ] || fail "XC_TRACE_DEPTH=$d: the job exited $rc"
  done
  ;;
*)
  echo "unknown mode $MODE"
  exit 2
  ;;
esac
finish
