#!/usr/bin/env bash
# ft.sh XCRUN PROG NRANKS TRIALS MODE [ARGS...]
#
# Runs `xcrun --keep-going -n NRANKS PROG DIR MODE ARGS` TRIALS times (trial
# t with XC_TEST_SEED = XC_TEST_SEED_BASE + t, default base 1) and checks
# each run:
#   1. every rank either passed (DIR/rank<r>.ok) or was killed by the test
#      (DIR/killed<r>.time); none failed a check (DIR/rank<r>.fail);
#   2. xcrun exits 137 when a rank was killed (the victim's SIGKILL), else 0,
#      and names every killed rank, and says the others kept going;
#   3. the run ended on its own within 60 s.
# Prints each survivor's report for the first trial and a summary line.
set -u
XCRUN=$1 PROG=$2 N=$3 TRIALS=$4
shift 4
base=${XC_TEST_SEED_BASE:-1}
source "$(dirname "$0")/../common/checks.sh"
failed=0
start_all=$(now_ms)
for ((t = 1; t <= TRIALS; ++t)); do
  dir="$tmp/t$t"
  mkdir "$dir"
  seed=$((base + t))
  start=$(now_ms)
  XC_TEST_SEED=$seed timeout -s KILL 90 "$XCRUN" --keep-going -n "$N" "$PROG" "$dir" "$@" \
    </dev/null >"$dir/out" 2>"$dir/err"
  rc=$?
  elapsed=$(($(now_ms) - start))
  problems=""
  killed=0
  for ((r = 0; r < N; ++r)); do
    if [ -e "$dir/rank$r.fail" ]; then
      problems+="rank $r failed: $(cat "$dir/rank$r.fail")"$'\n'
    elif [ -e "$dir/killed$r.time" ]; then
      killed=$((killed + 1))
      [ ! -e "$dir/rank$r.ok" ] || problems+="rank $r was killed and passed?"$'\n'
      grep -Eq "^xcrun: rank $r \(pid [0-9]+\) was killed by signal 9 \(Killed\)" "$dir/err" ||
        problems+="xcrun does not report that rank $r was killed"$'\n'
    elif [ ! -e "$dir/rank$r.ok" ]; then
      problems+="rank $r left no verdict (stopped or hung)"$'\n'
    fi
  done
  want=0
  [ "$killed" -eq 0 ] || want=137
  [ "$rc" -eq "$want" ] || problems+="xcrun exited $rc, want $want"$'\n'
  [ "$elapsed" -lt 60000 ] || problems+="the run took $elapsed ms"$'\n'
  if [ "$killed" -gt 0 ] && [ "$N" -gt 1 ]; then
    # (With nothing left running when xcrun reaped the victim it has no one
    # to let keep going: survivors that recovered in a few ms may be gone.)
    ! grep -q "stopping the other" "$dir/err" || problems+="xcrun did not let the others keep going"$'\n'
  fi
  if [ -n "$problems" ] || [ "$t" -eq 1 ]; then
    echo "trial $t (XC_TEST_SEED=$seed): xcrun exit $rc after $elapsed ms, $killed killed"
    for ((r = 0; r < N; ++r)); do
      [ -e "$dir/rank$r.ok" ] && { echo "rank $r:"; indent <"$dir/rank$r.ok"; }
    done
  fi
  if [ -n "$problems" ]; then
    failed=$((failed + 1))
    echo "FAIL:"; printf '%s' "$problems" | indent
    echo "stdout:"; indent <"$dir/out"
    echo "stderr:"; indent <"$dir/err"
  fi
done
echo "$((TRIALS - failed)) of $TRIALS trials passed in $(($(now_ms) - start_all)) ms ($N ranks: $*)"
[ "$failed" -eq 0 ]
