# Shared by the xcrun test scripts: sourced with the xcrun and helper paths
# as $1 and $2. Each check records a failure and the script goes on, so one
# run shows every problem; finish exits non-zero if any check failed.
set -u
XCRUN=$1
HELPER=$2
source "$(dirname "${BASH_SOURCE[0]}")/../common/checks.sh"

# run ARGS...: xcrun ARGS with stdin from /dev/null; sets rc, out, err and
# elapsed (ms). The outer timeout only guards against a hung xcrun.
run() {
  local start
  start=$(now_ms)
  timeout -s KILL 20 ${RUN_WRAP:-} "$XCRUN" "$@" <"${RUN_STDIN:-/dev/null}" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  elapsed=$(($(now_ms) - start))
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
}

expect_rc() {  # WANT DESCRIPTION
  if [ "$rc" != "$1" ]; then
    fail "$2: exit status $rc, want $1"
    echo "  stdout: $out"
    echo "  stderr: $err"
  fi
}

expect_grep() {  # TEXT ERE DESCRIPTION
  if ! grep -Eq -- "$2" <<<"$1"; then
    fail "$3: no line matches /$2/ in:"
    echo "$1" | sed 's/^/  | /'
  fi
}

expect_no_grep() {  # TEXT ERE DESCRIPTION
  if grep -Eq -- "$2" <<<"$1"; then fail "$3: a line matches /$2/"; fi
}

expect_faster() {  # MS DESCRIPTION
  if [ "$elapsed" -ge "$1" ]; then fail "$2: took $elapsed ms, want < $1 ms"; fi
}
