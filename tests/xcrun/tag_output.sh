# --tag-output: every line of both streams carries "[rank] ", an unfinished
# last line too, and an overlong line stays one prefixed line.
source "$(dirname "$0")/common.sh"

run -n 3 --tag-output "$HELPER" print
expect_rc 0 "--tag-output"
for r in 0 1 2; do
  expect_grep "$out" "^\[$r\] out line from $r\$" "stdout of rank $r"
  expect_grep "$out" "^\[$r\] partial $r\$" "unfinished last line of rank $r"
  expect_grep "$err" "^\[$r\] err line from $r\$" "stderr of rank $r"
done
[ "$(wc -l <"$tmp/out")" = 6 ] || fail "stdout has $(wc -l <"$tmp/out") lines, want 6"
[ "$(wc -l <"$tmp/err")" = 3 ] || fail "stderr has $(wc -l <"$tmp/err") lines, want 3"
expect_no_grep "$out" '^[^[]' "an untagged stdout line"
expect_no_grep "$err" '^[^[]' "an untagged stderr line"

# Lines of one rank stay in order.
[ "$(grep '^\[1\]' "$tmp/out")" = $'[1] out line from 1\n[1] partial 1' ] || fail "rank 1's lines out of order"

# A line longer than xcrun's line buffer.
run -n 1 --tag-output sh -c 'head -c 200000 /dev/zero | tr "\0" a; echo'
expect_rc 0 "long line"
[ "$(wc -l <"$tmp/out")" = 1 ] || fail "a long line became $(wc -l <"$tmp/out") lines"
[ "$(wc -c <"$tmp/out")" = 200005 ] || fail "a long line has $(wc -c <"$tmp/out") bytes, want 200005"
expect_grep "$out" '^\[0\] aaaa' "long line prefix"

# Without the option the output passes untouched.
run -n 2 sh -c 'echo "out line from $XC_RANK"; echo "err line from $XC_RANK" >&2'
expect_rc 0 "without --tag-output"
expect_grep "$out" '^out line from 1$' "untagged stdout"
expect_grep "$err" '^err line from 0$' "untagged stderr"

finish
