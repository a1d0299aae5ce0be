#!/usr/bin/env bash
# fault_blame.sh verdict   XCRUN
#   xcrun names a rank killed by a signal, not one that exited 1 just before.
# fault_blame.sh mismatch  XCRUN PROG
#   8 jobs of `xcrun -n 2 PROG mismatch`: each must exit 0 (rank 0 got the
#   mismatch, not a peer failure for rank 1's clean exit).
# fault_blame.sh pending   XCRUN PROG
#   The same with `PROG pending`: rank 1 exits with a request unfinished,
#   and rank 0 must hear that it left, not that it failed.
# fault_blame.sh splitkill|createkill|setupgone XCRUN PROG N
#   N ranks of `PROG MODE DIR` started here with torchrun's variables
#   (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and XC_JOB_ID: no xcrun, so
#   no sweep of /dev/shm. The last rank must die by SIGKILL, the others exit
#   0, and no /dev/shm/xcomm-<job>-* may be left.
# fault_blame.sh chaos XCRUN PROG N
#   Trials of `xcrun --grace 30 -n N PROG chaos DIR` with seeds 1, 2, ...:
#   XC_CHAOS_TRIALS (default 30), stopping early once XC_CHAOS_SECONDS
#   (default 60) have passed. In each: xcrun exits 137 and names the victim
#   killed by signal 9 (and no survivor as the failure), every survivor wrote
#   DIR/rank<r>.ok, and nothing of the job is left in /dev/shm (nor did xcrun
#   have to remove anything).
set -u
MODE=$1
XCRUN=$2
PROG=${3:-}
N=${4:-2}
source "$(dirname "$0")/../common/checks.sh"

shm_left() {  # names of job $1 in /dev/shm, removed after
  local left
  left=$(find /dev/shm -maxdepth 1 -name "xcomm-$1-*" 2>/dev/null | tr '\n' ' ')
  rm -f /dev/shm/xcomm-"$1"-* 2>/dev/null
  echo "$left"
}

case "$MODE" in
verdict)
  # Rank 0 exits 1 at once, rank 1 is SIGKILLed 50 ms later (a survivor that
  # saw the death and the dead one, reaped in the wrong order): xcrun must
  # call the SIGKILL the job's failure (exit 137), and still mention rank 0.
  for ((i = 0; i < 3; ++i)); do
    timeout -s KILL 50 "$XCRUN" -n 2 sh -c 'if [ "$XC_RANK" = 0 ]; then exit 1; fi; sleep 0.05; kill -9 $$' \
      </dev/null >"$tmp/out" 2>&1
    rc=$?
    echo "xcrun exited $rc:"
    indent <"$tmp/out"
    [ "$rc" -eq 137 ] || fail "xcrun exited $rc, want 137 (rank 1's SIGKILL)"
    grep -Eq '^xcrun: rank 1 \(pid [0-9]+\) was killed by signal 9' "$tmp/out" || fail "xcrun does not name rank 1's SIGKILL"
    grep -Eq '^xcrun: rank 0 .*exit status 1' "$tmp/out" || fail "xcrun does not mention rank 0's exit status"
  done
  ;;
mismatch | pending)
  for ((i = 0; i < 8; ++i)); do
    timeout -s KILL 50 "$XCRUN" -n 2 "$PROG" "$MODE" </dev/null >"$tmp/out" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ]; then
      fail "job $i: xcrun exited $rc"
      indent <"$tmp/out"
    fi
  done
  ;;
splitkill | createkill | setupgone)
  job="blame$$x$RANDOM"
  port=$((20000 + (RANDOM % 20000)))
  mkdir "$tmp/job"
  pids=()
  for ((r = 0; r < N; ++r)); do
    env -u XC_RANK -u XC_SIZE -u XC_STORE_ADDR RANK=$r WORLD_SIZE=$N LOCAL_RANK=$r LOCAL_WORLD_SIZE=$N \
      MASTER_ADDR=127.0.0.1 MASTER_PORT=$port XC_JOB_ID=$job \
      timeout -s KILL 50 "$PROG" "$MODE" "$tmp/job" </dev/null >"$tmp/out$r" 2>&1 &
    pids+=($!)
  done
  for ((r = 0; r < N; ++r)); do
    wait "${pids[$r]}"
    rc=$?
    echo "rank $r exited $rc:"
    indent <"$tmp/out$r"
    if [ "$r" -eq $((N - 1)) ]; then
      [ "$rc" -eq 137 ] || fail "rank $r (the victim) exited $rc, want 137 (SIGKILL)"
    else
      [ "$rc" -eq 0 ] || fail "rank $r (a survivor) exited $rc"
    fi
  done
  left=$(shm_left "$job")
  [ -z "$left" ] || fail "shared-memory files of job $job left behind: $left"
  ;;
chaos)
  trials=${XC_CHAOS_TRIALS:-30}
  budget_ms=$((${XC_CHAOS_SECONDS:-60} * 1000))
  start=$(now_ms)
  done_trials=0
  for ((seed = 1; seed <= trials; ++seed)); do
    [ $(($(now_ms) - start)) -lt "$budget_ms" ] || break
    dir="$tmp/t$seed"
    mkdir "$dir"
    XC_TEST_SEED=$seed timeout -s KILL 55 "$XCRUN" --grace 30 -n "$N" "$PROG" chaos "$dir" </dev/null \
      >"$dir/out" 2>"$dir/err"
    rc=$?
    done_trials=$((done_trials + 1))
    before=$failures
    victim=$(cat "$dir/victim" 2>/dev/null)
    job=$(cat "$dir/job_id" 2>/dev/null)
    [ "$rc" -eq 137 ] || fail "seed $seed: xcrun exited $rc, want 137 (the victim's SIGKILL)"
    if [ -z "$victim" ] || [ -z "$job" ]; then
      fail "seed $seed: rank 0 did not record the victim and the job"
    else
      grep -Eq "^xcrun: rank $victim \(pid [0-9]+\) was killed by signal 9" "$dir/err" ||
        fail "seed $seed: xcrun does not say that rank $victim was killed by signal 9"
      ! grep -E '^xcrun: rank [0-9]+ .*(exited with status|was killed)' "$dir/err" | grep -vq "^xcrun: rank $victim " ||
        fail "seed $seed: xcrun blames a rank other than the victim"
      for ((r = 0; r < N; ++r)); do
        [ "$r" -eq "$victim" ] && continue
        if [ -f "$dir/rank$r.fail" ]; then
          fail "seed $seed: rank $r: $(head -1 "$dir/rank$r.fail")"
        elif [ ! -f "$dir/rank$r.ok" ]; then
          fail "seed $seed: rank $r (a survivor) wrote no verdict"
        fi
      done
      left=$(shm_left "$job")
      [ -z "$left" ] || fail "seed $seed: shared-memory files of job $job left behind: $left"
      ! grep -q 'leftover shared-memory file' "$dir/err" || fail "seed $seed: xcrun had to remove shared-memory files"
    fi
    if [ "$failures" -ne "$before" ]; then
      echo "seed $seed (xcrun exit $rc) stdout, stderr and reports:"
      indent <"$dir/out"
      indent <"$dir/err"
      cat "$dir"/rank*.* 2>/dev/null | indent
    fi
  done
  echo "$done_trials chaos trials in $(($(now_ms) - start)) ms"
  [ "$done_trials" -ge 5 ] || fail "only $done_trials trials ran"
  ;;
*)
  echo "unknown mode $MODE"
  exit 2
  ;;
esac
finish
