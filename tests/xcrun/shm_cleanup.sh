# Shared-memory files a crashed rank left as /dev/shm/xcomm-<job>-* are
# removed when xcrun exits, after a failure and after success alike.
source "$(dirname "$0")/common.sh"

if [ ! -d /dev/shm ] || [ ! -w /dev/shm ]; then
  echo "no writable /dev/shm"
  exit 77
fi

run -n 3 "$HELPER" shm 1
expect_rc 1 "rank 1 fails after leaving shared memory"
[ "$(wc -l <"$tmp/out")" = 3 ] || fail "ranks reported $(wc -l <"$tmp/out") segments, want 3"
while read -r f; do [ ! -e "$f" ] || { fail "$f left behind"; rm -f "$f"; }; done <"$tmp/out"
expect_grep "$err" '^xcrun: removed 3 leftover shared-memory files of job ' "cleanup message"

run -n 2 "$HELPER" shm -1
expect_rc 0 "successful job with leftovers"
[ "$(wc -l <"$tmp/out")" = 2 ] || fail "ranks reported $(wc -l <"$tmp/out") segments, want 2"
while read -r f; do [ ! -e "$f" ] || { fail "$f left behind"; rm -f "$f"; }; done <"$tmp/out"

# Another job's files are not touched.
other=/dev/shm/xcomm-jnotthisjob-test-$$
touch "$other"
run -n 2 "$HELPER" shm 0
[ -e "$other" ] || fail "another job's file was removed"
rm -f "$other"

finish
