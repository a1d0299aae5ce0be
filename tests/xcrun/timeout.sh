# --timeout stops the whole job after its wall time and exits 124.
source "$(dirname "$0")/common.sh"

run -n 3 --timeout 1 "$HELPER" pause
expect_rc 124 "--timeout 1"
expect_grep "$err" '^xcrun: job timed out after 1 s; stopping the 3 ranks$' "timeout message"
[ "$elapsed" -ge 950 ] || fail "timed out after $elapsed ms, before 1 s"
expect_faster 6000 "--timeout 1"

# Ranks that ignore SIGTERM are killed after the grace period.
run -n 2 --timeout 0.3 --grace 0.3 "$HELPER" stubborn -1
expect_rc 124 "--timeout with stubborn ranks"
expect_faster 6000 "--timeout with stubborn ranks"

run -n 2 --timeout 30 true
expect_rc 0 "a job that ends in time"
expect_faster 6000 "a job that ends in time"

finish
