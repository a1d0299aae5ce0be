# Shared by the shell tests that check many things in one run: sourced
# after `set -u`. Each check records a failure and the script goes on, so one
# run shows every problem; finish exits non-zero if any check failed. $tmp
# is a scratch directory removed at exit.
failures=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

indent() { sed 's/^/  | /'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
  fi
  echo "all checks passed"
  exit 0
}
