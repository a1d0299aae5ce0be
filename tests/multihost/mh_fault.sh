#!/usr/bin/env bash
# Failures across network namespaces (netns.sh), each bounded by the
# deadline (XC_TIMEOUT, 10 s here) and leaving nothing in /dev/shm:
#   (c) a node that never arrives: node 0 fails naming node rank 1;
#   (a) kill -9 of a rank on another host in the middle of allreduces
#       (mh_loop), and fault_kill's ring exchange (its victim, the last
#       rank, on the last host) with its survivors' checks;
#   (b) a host's link taken down in the middle of allreduces.
# (c) needs only the bootstrap store; (a) and (b) need a transport between
# hosts and are skipped without one.
# Arguments: xcrun xc-bench mh_loop fault_kill
MH_XCRUN=$1 MH_XC_BENCH=$2 LOOP=$3 FAULT_KILL=$4
source "$(dirname "$0")/netns.sh"
MH_TIMEOUT_MS=10000
slack_ms=10000  # xcrun's settling time and grace, start-up, a busy 2-core machine
mh_hosts 2

# (c) Only node 0 of 2 starts: its ranks give up at the deadline, naming
# the node that never came and its ranks.
MH_TIMEOUT_MS=3000 mh_job never 2 2 --started 1 --expect-fail -- "$LOOP" 30
out=$(mh_out never 0)
grep -q 'ranks 2, 3 never arrived (node rank 1,' <<<"$out" ||
  { mh_fail "(c) node 0 does not name node rank 1 and ranks 2, 3:"; sed 's/^/  | /' <<<"$out"; }
[ "$MH_ELAPSED_MS" -lt $((3000 + slack_ms)) ] || mh_fail "(c) took $MH_ELAPSED_MS ms for a 3000 ms deadline"

if ! mh_have_network_transport; then
  echo "SKIP (a), (b): $MH_NO_TRANSPORT; (c) checked"
  [ "$MH_FAILURES" = 0 ] && exit 77
  mh_finish
fi

# expect_reported NAME WHAT: every host's xcrun failed, within the deadline
# plus slack after the strike, and some survivor said which op failed.
expect_reported() {
  local since=$(($(mh_now_ms) - MH_STRUCK_MS))
  [ "$since" -lt $((MH_TIMEOUT_MS + slack_ms)) ] || mh_fail "$2: the job ended $since ms after the strike"
  grep -q 'allreduce failed after' <<<"$(mh_out "$1" 0)" ||
    { mh_fail "$2: no survivor on host 0 reported the failed allreduce:"; mh_show "$1" 2; }
}

# (a) kill -9 rank 3 (host 1) once every rank is in the loop.
mh_start kill 2 2 --expect-fail -- "$LOOP" 60
if mh_wait_lines kill '^\[[0-9]+\] running rank' 4 30; then
  victim=$(sed -n 's/^\[3\] running rank 3 pid \([0-9]*\)$/\1/p' "$MH_DIR"/kill.1.out)
  MH_STRUCK_MS=$(mh_now_ms)
  kill -9 "$victim"
else
  mh_fail "(a) the ranks did not all start their loops within 30 s"
fi
mh_wait
expect_reported kill "(a) kill -9 of rank 3 on host 1"

# (a) fault_kill's ring exchange: the victim (rank 3, host 1) kills itself;
# the survivors (ranks 0, 1 on host 0, rank 2 on host 1) check the error,
# the async error and the communicator split off before the kill, and each
# writes its verdict; --grace 30 lets them finish after xcrun's SIGTERM.
mkdir "$MH_DIR/fk"
mh_job fault_kill 2 2 --expect-fail -- --grace 30 "$FAULT_KILL" "$MH_DIR/fk" ring exchange
[ "${mh_rc[1]}" = 137 ] || mh_fail "fault_kill: host 1's xcrun exited ${mh_rc[1]}, want 137 (its rank 3 killed)"
for r in 0 1 2; do
  if [ -f "$MH_DIR/fk/rank$r.ok" ]; then
    grep -q "^message=.*rank 3\\b" "$MH_DIR/fk/rank$r.ok" || mh_fail "fault_kill: rank $r's message does not name rank 3"
  else
    mh_fail "fault_kill: survivor rank $r wrote no verdict ($(cat "$MH_DIR/fk/rank$r.fail" 2>/dev/null))"
  fi
done
[ "$MH_FAILURES" = 0 ] || mh_show fault_kill 2

# (b) host 1's link goes down once every rank is in the loop: with no reset
# to tell them, the ranks on both sides must give up at the deadline.
mh_start linkdown 2 2 --expect-fail -- "$LOOP" 60
if mh_wait_lines linkdown '^\[[0-9]+\] running rank' 4 30; then
  MH_STRUCK_MS=$(mh_now_ms)
  mh_link_down 1
else
  mh_fail "(b) the ranks did not all start their loops within 30 s"
fi
mh_wait
expect_reported linkdown "(b) host 1's link down"
grep -q 'allreduce failed after' <<<"$(mh_out linkdown 1)" ||
  { mh_fail "(b) no rank on host 1 (cut off) reported the failed allreduce"; mh_show linkdown 2; }
mh_finish
