# A failing rank stops the job: the message names it, the others get up to
# 1 s to end on their own, then SIGTERM (SIGKILL after the grace period), and
# xcrun's exit status is the failing rank's.
source "$(dirname "$0")/common.sh"

run -n 3 true
expect_rc 0 "all ranks succeed"
[ -z "$err" ] || fail "a successful job printed: $err"

# The grace period is long, so a quick end proves SIGTERM stopped the others.
run -n 3 --grace 30 "$HELPER" fail 1 3
expect_rc 3 "rank 1 exits 3"
expect_grep "$err" '^xcrun: rank 1 \(pid [0-9]+\) exited with status 3; stopping the other 2 ranks$' "exit message"
expect_faster 10000 "stopping after exit 3"

# The others end their output before they are stopped: a rank that fails
# too a moment later (as a Python rank prints its traceback after xcomm
# reports the dead peer) is not cut off by SIGTERM, with or without
# --tag-output. The first job above shows that ranks which do not end are
# still stopped at once.
late='if [ "$XC_RANK" = 0 ]; then exit 3; fi; echo "rank $XC_RANK: first line"; sleep 0.3; echo "rank $XC_RANK: last line"; echo "rank $XC_RANK: error" >&2; exit 1'
for tag in "" --tag-output; do
  run -n 3 --grace 30 $tag sh -c "$late"
  expect_rc 3 "late failure ${tag:-untagged}: rank 0's status"
  for r in 1 2; do
    expect_grep "$out" "rank $r: last line\$" "late failure ${tag:-untagged}: rank $r's last line"
    expect_grep "$err" "rank $r: error\$" "late failure ${tag:-untagged}: rank $r's last error line"
  done
  expect_faster 10000 "late failure ${tag:-untagged}"
done

run -n 3 --grace 30 "$HELPER" sigkill 2
expect_rc 137 "rank 2 killed by SIGKILL"
expect_grep "$err" '^xcrun: rank 2 \(pid [0-9]+\) was killed by signal 9 \(Killed\); stopping the other 2 ranks$' \
  "signal message"
expect_faster 10000 "stopping after SIGKILL"

# Ranks that ignore SIGTERM are killed when the grace period ends.
mkfifo "$tmp/fifo"
run -n 3 --grace 0.5 "$HELPER" stubborn 0 "$tmp/fifo"
expect_rc 5 "stubborn ranks"
expect_grep "$err" '^xcrun: rank 0 \(pid [0-9]+\) exited with status 5; stopping the other 2 ranks$' "stubborn message"
[ "$elapsed" -ge 450 ] || fail "survivors were killed after $elapsed ms, before the 500 ms grace period"
expect_faster 10000 "SIGKILL after the grace period"

# A program that cannot be run.
run -n 2 /nonexistent/xcrun-no-such-program
expect_rc 127 "missing program"
expect_grep "$err" "^xcrun: cannot run '/nonexistent/xcrun-no-such-program': No such file or directory\$" \
  "exec error"
expect_grep "$err" '^xcrun: rank [01] \(pid [0-9]+\) exited with status 127' "exec failure as a rank failure"

# --keep-going: the others run on (they exit 0 after their sleep), every
# failure is reported when it happens and at the end, and the exit status
# is the first rank killed by a signal.
kg='case $XC_RANK in 1) exit 3;; 2) kill -9 $$;; esac; sleep 0.5; echo "rank $XC_RANK: still here"'
run -n 4 --grace 30 --keep-going sh -c "$kg"
expect_rc 137 "--keep-going: the SIGKILLed rank's status"
expect_grep "$err" '^xcrun: rank 1 \(pid [0-9]+\) exited with status 3; the other [0-9]+ ranks? keep going \(--keep-going\)$' \
  "--keep-going: rank 1's failure when it happens"
expect_grep "$err" '^xcrun: rank 2 \(pid [0-9]+\) was killed by signal 9 \(Killed\)' "--keep-going: rank 2's failure"
expect_grep "$err" '^xcrun: 2 ranks failed: rank [12] \(.*\), rank [12] \(.*\)$' "--keep-going: the summary"
for r in 0 3; do
  expect_grep "$out" "rank $r: still here\$" "--keep-going: rank $r ran on"
done
run -n 2 --keep-going sh -c '[ "$XC_RANK" = 0 ] || exit 4'
expect_rc 4 "--keep-going: an exit status"

# One rank alone: nobody to stop.
run -n 1 sh -c 'exit 7'
expect_rc 7 "single rank exits 7"
expect_grep "$err" '^xcrun: rank 0 \(pid [0-9]+\) exited with status 7$' "single rank message"

finish
