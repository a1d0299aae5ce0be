# SIGTERM and SIGINT sent to xcrun reach every rank (each in its own process
# group, so only xcrun's forwarding can deliver them); xcrun exits 128+N. A
# second signal kills ranks that ignore the first at once.
source "$(dirname "$0")/common.sh"

# start_job ARGS...: xcrun ARGS in the background with SIGINT deliverable;
# sets pid. The ranks each write a byte into the fifo on fd 3 when ready.
start_job() {
  rm -f "$tmp/fifo"
  mkfifo "$tmp/fifo"
  exec 3<>"$tmp/fifo"  # holding a write end: no early EOF between ranks
  "$HELPER" exec-default-sigint "$XCRUN" "$@" </dev/null >"$tmp/out" 2>"$tmp/err" &
  pid=$!
}

wait_ready() {  # N
  local got
  read -r -N "$1" -t 8 -u 3 got || fail "the ranks did not get ready"
}

for sig in TERM INT; do
  mkdir -p "$tmp/rec.$sig"
  start_job -n 3 "$HELPER" record "$tmp/rec.$sig" "$tmp/fifo"
  wait_ready 3
  kill -s "$sig" "$pid"
  wait "$pid"
  rc=$?
  num=$(kill -l "$sig")
  out=$(cat "$tmp/out") err=$(cat "$tmp/err")
  expect_rc $((128 + num)) "xcrun got SIG$sig"
  expect_grep "$err" "^xcrun: got SIG$sig; passing it on to the 3 ranks\$" "SIG$sig message"
  for r in 0 1 2; do
    got=$(cat "$tmp/rec.$sig/sig.$r" 2>/dev/null)
    [ "$got" = "$num" ] || fail "rank $r recorded signal '$got', want $num"
  done
  exec 3>&-
done

# A second SIGTERM does not wait for the 30 s grace period.
rm -f "$tmp/fifo"
mkfifo "$tmp/fifo"
exec 3<>"$tmp/fifo"
start=$(now_ms)
"$XCRUN" -n 2 --grace 30 sh -c 'trap "" TERM; printf r >"$0"; exec "$1" pause' "$tmp/fifo" "$HELPER" \
  </dev/null >"$tmp/out" 2>"$tmp/err" &
pid=$!
wait_ready 2
kill -s TERM "$pid"
for ((i = 0; i < 500; i++)); do  # the second must not merge with the first
  grep -q 'got SIGTERM;' "$tmp/err" && break
  sleep 0.01
done
kill -s TERM "$pid"
wait "$pid"
rc=$?
elapsed=$(($(now_ms) - start))
out=$(cat "$tmp/out") err=$(cat "$tmp/err")
expect_rc 143 "second SIGTERM"
expect_grep "$err" '^xcrun: got SIGTERM again; killing the 2 ranks$' "second signal message"
expect_faster 10000 "second SIGTERM kills at once"

finish
