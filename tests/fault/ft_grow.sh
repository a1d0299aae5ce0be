#!/usr/bin/env bash
# ft_grow.sh XCRUN PROG NOLD NNEW
#
# Starts `xcrun -n NOLD PROG DIR grow NNEW`; once its rank 0 wrote the unique
# id to DIR/id, starts NNEW processes `PROG DIR join NOLD NNEW i` outside
# xcrun (another XC_JOB_ID, as from another launch), which join the grown
# communicator. Every process must pass (DIR/rank<r>.ok) and exit 0.
set -u
XCRUN=$1 PROG=$2 NOLD=$3 NNEW=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
indent() { sed 's/^/  | /'; }
fail=0
timeout -s KILL 90 "$XCRUN" -n "$NOLD" "$PROG" "$tmp" grow "$NNEW" </dev/null >"$tmp/out" 2>"$tmp/err" &
xcrun_pid=$!
# The id appears once rank 0 is running: wait for it, with a deadline.
for ((i = 0; i < 300; ++i)); do [ -e "$tmp/id" ] && break; sleep 0.1; done
[ -e "$tmp/id" ] || { echo "FAIL: rank 0 never wrote the unique id"; fail=1; }
pids=()
for ((i = 0; i < NNEW; ++i)); do
  env -u XC_RANK -u XC_SIZE XC_JOB_ID="joiner$$" timeout -s KILL 90 "$PROG" "$tmp" join "$NOLD" "$NNEW" "$i" \
    </dev/null >"$tmp/join$i.out" 2>"$tmp/join$i.err" &
  pids+=($!)
done
wait "$xcrun_pid"; rc=$?
[ "$rc" -eq 0 ] || { echo "FAIL: xcrun exited $rc"; fail=1; }
for ((i = 0; i < NNEW; ++i)); do
  wait "${pids[$i]}"; jrc=$?
  [ "$jrc" -eq 0 ] || { echo "FAIL: new process $i exited $jrc"; indent <"$tmp/join$i.err"; fail=1; }
done
for ((r = 0; r < NOLD + NNEW; ++r)); do
  if [ -e "$tmp/rank$r.ok" ]; then echo "rank $r:"; indent <"$tmp/rank$r.ok"
  else echo "FAIL: rank $r did not pass"; [ -e "$tmp/rank$r.fail" ] && indent <"$tmp/rank$r.fail"; fail=1; fi
done
if [ "$fail" -ne 0 ]; then echo "xcrun stderr:"; indent <"$tmp/err"; exit 1; fi
echo "grew $NOLD -> $((NOLD + NNEW)) ranks; all passed"
